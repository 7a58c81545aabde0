// The Aider importer: Aider's Markdown chat histories (`.aider.chat.history.md` in each repository;
// the folders named, or $AIDER_DIR), as usage events (rounded: flagged approximate) and its logged
// actions as tool_call events. The format and its limits are in README.md.
import type { Importer } from '../types.ts';
import { aiderReading, parseAiderFile } from './parser.ts';
import { defaultAiderPaths, listAiderFiles } from './paths.ts';

export const aiderImporter: Importer = {
  id: 'aider',
  harnesses: ['aider'],
  samples: { fixtures: ['test/importers/fixtures-aider'], corpus: [] },
  description: 'Aider chat histories (.aider.chat.history.md in each repository; the folders named, or $AIDER_DIR): usage (rounded, flagged approximate) and edits, commands, commits',
  defaultPaths: () => defaultAiderPaths(),
  listFiles: (paths) => listAiderFiles(paths),
  parseFile: (path, data) => parseAiderFile(path, data),
  readingOf: (path) => ({ kind: 'lines', reading: aiderReading(path) }),
};
