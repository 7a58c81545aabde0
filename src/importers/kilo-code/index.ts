// The Kilo Code importer: task folders under VS Code's globalStorage of kilocode.kilo-code,
// tasks/<id>/ui_messages.json (usage) and api_conversation_history.json (tool calls), read by
// Cline's parser; a subtask's history_item.json (as Roo Code writes it) names its root task.
import { listTaskFiles } from '../cline/paths.ts';
import { readBeside } from '../roo-code/index.ts';
import { historyItemPath } from '../roo-code/paths.ts';
import { rootTaskOf } from '../roo-code/types.ts';
import { MAX_DOCUMENT_BYTES, type Importer } from '../types.ts';
import { parseKiloFile } from './parser.ts';
import { defaultKiloPaths } from './paths.ts';

export const kiloCodeImporter: Importer = {
  id: 'kilo-code',
  harnesses: ['kilo_code'],
  samples: { fixtures: ['test/importers/fixtures-kilo-code'], corpus: [] },
  description: 'Kilo Code task folders (VS Code globalStorage kilocode.kilo-code, tasks/*/ui_messages.json and api_conversation_history.json): tool calls and API usage',
  defaultPaths: () => defaultKiloPaths(),
  listFiles: (paths) => listTaskFiles(paths),
  parseFile: (path, data) => {
    const root = rootTaskOf(readBeside(historyItemPath(path)));
    return parseKiloFile(path, data, root === undefined ? {} : { rootTaskId: root });
  },
  readingOf: () => ({ kind: 'document', maxBytes: MAX_DOCUMENT_BYTES }),
};
