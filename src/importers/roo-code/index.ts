// The Roo Code importer: task folders under VS Code's globalStorage of rooveterinaryinc.roo-cline,
// tasks/<id>/ui_messages.json (usage) and api_conversation_history.json (tool calls), read by
// Cline's parser. A subtask's history_item.json names its root task, read here so the parser stays pure.
import { readFileSync } from 'node:fs';
import { listTaskFiles } from '../cline/paths.ts';
import { MAX_DOCUMENT_BYTES, type Importer } from '../types.ts';
import { parseRooFile } from './parser.ts';
import { defaultRooPaths, historyItemPath } from './paths.ts';
import { rootTaskOf } from './types.ts';

/** The text of a file beside the task file, or undefined when it cannot be read. */
export function readBeside(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

export const rooCodeImporter: Importer = {
  id: 'roo-code',
  harnesses: ['roo_code'],
  samples: { fixtures: ['test/importers/fixtures-roo-code'], corpus: [] },
  description: 'Roo Code task folders (VS Code globalStorage rooveterinaryinc.roo-cline, tasks/*/ui_messages.json and api_conversation_history.json): tool calls and API usage',
  defaultPaths: () => defaultRooPaths(),
  listFiles: (paths) => listTaskFiles(paths),
  parseFile: (path, data) => {
    const root = rootTaskOf(readBeside(historyItemPath(path)));
    return parseRooFile(path, data, root === undefined ? {} : { rootTaskId: root });
  },
  readingOf: () => ({ kind: 'document', maxBytes: MAX_DOCUMENT_BYTES }),
};
