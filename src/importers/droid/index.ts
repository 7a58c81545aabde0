// The Factory Droid importer: Droid's session transcripts under ~/.factory/sessions (**/*.jsonl),
// each read with the settings file beside it (<session>.settings.json: the session's token
// totals), as tool_call events and one usage event per session. The format is in README.md.
import { readFileSync } from 'node:fs';
import type { Importer } from '../types.ts';
import { droidReading, parseDroidFile } from './parser.ts';
import { defaultDroidPaths, listDroidFiles, settingsPathOf } from './paths.ts';

/** The settings file's text beside a transcript, or undefined when there is none. */
function settingsOf(path: string): string | undefined {
  try {
    return readFileSync(settingsPathOf(path), 'utf8');
  } catch {
    return undefined;
  }
}

export const droidImporter: Importer = {
  id: 'droid',
  harnesses: ['droid'],
  samples: { fixtures: ['test/importers/fixtures-droid'], corpus: [] },
  description: 'Factory Droid sessions (~/.factory/sessions/**/*.jsonl, with <session>.settings.json beside each): tool calls, and the session\'s token totals as one usage',
  defaultPaths: () => defaultDroidPaths(),
  listFiles: (paths) => listDroidFiles(paths),
  parseFile: (path, data) => parseDroidFile(path, data, settingsOf(path)),
  readingOf: (path) => {
    const settings = settingsOf(path);
    return { kind: 'lines', reading: droidReading({ path, ...(settings === undefined ? {} : { settings }) }) };
  },
};
