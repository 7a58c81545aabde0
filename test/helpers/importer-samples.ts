// Every file an importer has to be read on in the tests: its fixture folders
// (test/importers/fixtures-<id>[-…]) and the shared corpus's real logs of its harness
// (corpus.ts: read in place; skipped loudly when absent, an error under CI=true).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Importer } from '../../src/importers/types.ts';
import { corpusOrSkip } from './corpus.ts';

const IMPORTERS_DIR = new URL('../importers/', import.meta.url).pathname;

/** The shared corpus's folders each importer reads, beside its fixtures. */
const CORPUS_DIRS: Partial<Record<string, string[]>> = {
  'claude-code': ['claude-code'],
  codex: ['codex', 'samples/codex'],
  opencode: ['samples/opencode'],
  'gemini-cli': ['samples/gemini_cli'],
  otlp: ['samples/otel_genai', 'samples/claude_code_otel'],
};

/**
 * The files `importer` lists in its fixture folders and its corpus folders; null when it has no
 * fixtures and its corpus folders are absent (the suite is skipped, with corpus.ts's warning).
 */
export function sampleFiles(importer: Importer, suite: string): string[] | null {
  const paths = readdirSync(IMPORTERS_DIR)
    .filter((d) => d === `fixtures-${importer.id}` || d.startsWith(`fixtures-${importer.id}-`))
    .map((d) => join(IMPORTERS_DIR, d));
  const corpusDirs = CORPUS_DIRS[importer.id] ?? [];
  const fromCorpus = corpusDirs.map((dir) => corpusOrSkip(dir, `${suite} (${importer.id})`)).filter((p): p is string => p !== null);
  if (paths.length === 0 && corpusDirs.length > 0 && fromCorpus.length === 0) return null;
  paths.push(...fromCorpus);
  return paths.length === 0 ? [] : importer.listFiles(paths);
}
