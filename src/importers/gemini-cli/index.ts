// The Gemini CLI importer: chat recordings (`~/.gemini/tmp/<project>/chats/*.json[l]`) to
// tool_call and usage events. The raw format and its traps are described in README.md beside
// this file.
import { MAX_DOCUMENT_BYTES, type Importer, type ParsedFile } from '../types.ts';
import { geminiReading, parseGeminiFile } from './parser.ts';
import { defaultGeminiPaths, listGeminiFiles } from './paths.ts';

export const geminiCliImporter: Importer = {
  id: 'gemini-cli',
  harnesses: ['gemini_cli'],
  samples: { fixtures: ['test/importers/fixtures-gemini-cli'], corpus: ['samples/gemini_cli'] },
  description: 'Gemini CLI chat recordings ($GEMINI_CLI_HOME/.gemini/tmp or ~/.gemini/tmp, */chats/*.json[l]): tool calls and API usage',
  defaultPaths: () => defaultGeminiPaths(),
  listFiles: (paths) => listGeminiFiles(paths),
  parseFile: (path: string, data: Buffer): ParsedFile => parseGeminiFile(path, data),
  // A `.json` chat is one document, read whole up to its limit; `.jsonl` is streamed in two passes.
  readingOf: (path) => (path.endsWith('.json') ? { kind: 'document', maxBytes: MAX_DOCUMENT_BYTES } : { kind: 'lines', reading: geminiReading(path) }),
};
