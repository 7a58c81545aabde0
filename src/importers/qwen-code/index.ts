// The Qwen Code importer: chat recordings under ~/.qwen (or $QWEN_RUNTIME_DIR), */chats/*.jsonl,
// as tool_call and usage events. The raw format and its traps are described in README.md.
import type { Importer } from '../types.ts';
import { defaultQwenPaths, listQwenFiles } from './paths.ts';
import { parseQwenFile, qwenReading } from './parser.ts';

export const qwenCodeImporter: Importer = {
  id: 'qwen-code',
  harnesses: ['qwen_code'],
  samples: { fixtures: ['test/importers/fixtures-qwen-code'], corpus: [] },
  description: 'Qwen Code chat recordings ($QWEN_RUNTIME_DIR or ~/.qwen, */chats/*.jsonl): tool calls and API usage',
  defaultPaths: () => defaultQwenPaths(),
  listFiles: (paths) => listQwenFiles(paths),
  parseFile: (path, data) => parseQwenFile(path, data),
  readingOf: (path) => ({ kind: 'lines', reading: qwenReading({ path }) }),
};
