// The shared corpus of real harness logs (../shared/corpus, beside the checkout in this
// project's CI layout). Tests that read it skip loudly when it is absent, as the Kafka tests do
// without a broker; under CI=true an absent corpus fails the run instead.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The corpus folder: $TOOLCANON_CORPUS, else ../shared/corpus beside the checkout. */
export const CORPUS_ROOT = resolve(process.env['TOOLCANON_CORPUS'] ?? new URL('../../../shared/corpus/', import.meta.url).pathname);

/** `CORPUS_ROOT/<sub>` when it exists; otherwise null after a loud warning (an error under CI=true). */
export function corpusOrSkip(sub: string, suite: string): string | null {
  const path = resolve(CORPUS_ROOT, sub);
  if (existsSync(path)) return path;
  const why = `the corpus folder ${path} does not exist`;
  if (process.env['CI'] === 'true') throw new Error(`${suite} cannot run under CI=true: ${why}`);
  const bar = '!'.repeat(78);
  console.warn(`\n${bar}\n!! SKIPPING ${suite}: ${why}.\n!! The corpus ships beside the project (../shared/corpus); point $TOOLCANON_CORPUS at a copy to run these tests.\n${bar}\n`);
  return null;
}

/** The lines of every `.jsonl` file under a folder (a corpus folder), empty lines left out. */
export function corpusLines(dir: string): string[] {
  const files = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(d, e.name)) : e.name.endsWith('.jsonl') ? [join(d, e.name)] : []));
  return files(dir).flatMap((f) => readFileSync(f, 'utf8').split('\n').filter((l) => l !== ''));
}
