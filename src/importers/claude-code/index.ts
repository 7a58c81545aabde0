// The Claude Code importer: session transcripts (`~/.claude/projects/**/*.jsonl`) to tool_call
// and usage events. The raw format and its traps are described in README.md beside this file.
import { parseLinesWith } from '../stream.ts';
import type { Importer, ParsedFile } from '../types.ts';
import { transcriptReading } from './parser.ts';
import { defaultProjectsDirs, fallbackSessionId, listTranscriptFiles } from './paths.ts';

export const claudeCodeImporter: Importer = {
  id: 'claude-code',
  harnesses: ['claude_code'],
  samples: { fixtures: ['test/importers/fixtures-claude-code'], corpus: ['claude-code'] },
  description: 'Claude Code session transcripts ($CLAUDE_CONFIG_DIR/projects or ~/.claude/projects): tool calls and API usage',
  defaultPaths: () => defaultProjectsDirs(),
  listFiles: (paths) => listTranscriptFiles(paths),
  parseFile: (path: string, data: Buffer): ParsedFile => parseLinesWith(transcriptReading({ path, fallbackSessionId: fallbackSessionId(path) }), data),
  readingOf: (path) => ({ kind: 'lines', reading: transcriptReading({ path, fallbackSessionId: fallbackSessionId(path) }) }),
};
