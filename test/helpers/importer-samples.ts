// Every file an importer has to be read on in the tests: its fixture folders
// (test/importers/fixtures-<id>[-…]) and the shared corpus's real logs of its harness, where the
// corpus is present (../shared/corpus, read in place).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Importer } from '../../src/importers/types.ts';

const IMPORTERS_DIR = new URL('../importers/', import.meta.url).pathname;
const CORPUS = new URL('../../../shared/corpus/', import.meta.url).pathname;

/** The shared corpus's folders each importer reads, beside its fixtures. */
const CORPUS_DIRS: Partial<Record<string, string[]>> = {
  'claude-code': ['claude-code'],
  codex: ['codex', 'samples/codex'],
  opencode: ['samples/opencode'],
  'gemini-cli': ['samples/gemini_cli'],
  otlp: ['samples/otel_genai', 'samples/claude_code_otel'],
};

/** The files `importer` lists in its fixture folders and its corpus folders. */
export function sampleFiles(importer: Importer): string[] {
  const paths = readdirSync(IMPORTERS_DIR)
    .filter((d) => d === `fixtures-${importer.id}` || d.startsWith(`fixtures-${importer.id}-`))
    .map((d) => join(IMPORTERS_DIR, d));
  for (const dir of CORPUS_DIRS[importer.id] ?? []) if (existsSync(join(CORPUS, dir))) paths.push(join(CORPUS, dir));
  return paths.length === 0 ? [] : importer.listFiles(paths);
}
