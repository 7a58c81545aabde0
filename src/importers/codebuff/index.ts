// The Codebuff importer: Codebuff's chats under ~/.config/<channel>/projects (manicode,
// manicode-dev, manicode-staging), chats/*/chat-messages.json, as usage events. See README.md.
import { MAX_DOCUMENT_BYTES, type Importer } from '../types.ts';
import { parseChatFile } from './parser.ts';
import { defaultCodebuffPaths, listCodebuffFiles } from './paths.ts';

export const codebuffImporter: Importer = {
  id: 'codebuff',
  harnesses: ['codebuff'],
  samples: { fixtures: ['test/importers/fixtures-codebuff'], corpus: [] },
  description: 'Codebuff chats (~/.config/manicode{,-dev,-staging}/projects/*/chats/*/chat-messages.json): API usage per assistant message',
  defaultPaths: () => defaultCodebuffPaths(),
  listFiles: (paths) => listCodebuffFiles(paths),
  parseFile: (path, data) => parseChatFile(path, data),
  readingOf: () => ({ kind: 'document', maxBytes: MAX_DOCUMENT_BYTES }),
};
