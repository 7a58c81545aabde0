// Every file an importer has to be read on in the tests: the sample folders its descriptor
// declares (Importer.samples): fixture folders of this repository, and the shared corpus's real
// logs of its harness (corpus.ts: read in place; skipped loudly when absent, an error under CI=true).
import { join } from 'node:path';
import type { Importer } from '../../src/importers/types.ts';
import { corpusOrSkip } from './corpus.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * The files `importer` lists in its fixture folders and its corpus folders; null when it has no
 * fixtures and its corpus folders are absent (the suite is skipped, with corpus.ts's warning).
 */
export function sampleFiles(importer: Importer, suite: string): string[] | null {
  const paths = importer.samples.fixtures.map((dir) => join(ROOT, dir));
  const corpusDirs = importer.samples.corpus;
  const fromCorpus = corpusDirs.map((dir) => corpusOrSkip(dir, `${suite} (${importer.id})`)).filter((p): p is string => p !== null);
  if (paths.length === 0 && corpusDirs.length > 0 && fromCorpus.length === 0) return null;
  paths.push(...fromCorpus);
  return paths.length === 0 ? [] : importer.listFiles(paths);
}
