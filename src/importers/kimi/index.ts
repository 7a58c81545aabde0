// The Kimi importer: Kimi Code's agent wire logs under ~/.kimi-code/sessions (or
// $KIMI_CODE_HOME/sessions) and Kimi CLI's under ~/.kimi/sessions (or $KIMI_SHARE_DIR/sessions),
// **/wire.jsonl, as tool_call and usage events. The raw formats and their traps are in README.md.
import type { Importer } from '../types.ts';
import { kimiReading, parseKimiFile } from './parser.ts';
import { defaultKimiPaths, listKimiFiles } from './paths.ts';

export const kimiImporter: Importer = {
  id: 'kimi',
  harnesses: ['kimi'],
  samples: { fixtures: ['test/importers/fixtures-kimi'], corpus: [] },
  description: 'Kimi Code and Kimi CLI wire logs ($KIMI_CODE_HOME or ~/.kimi-code, $KIMI_SHARE_DIR or ~/.kimi; sessions/**/wire.jsonl): tool calls and API usage',
  defaultPaths: () => defaultKimiPaths(),
  listFiles: (paths) => listKimiFiles(paths),
  parseFile: (path, data) => parseKimiFile(path, data),
  readingOf: (path) => ({ kind: 'lines', reading: kimiReading(path) }),
};
