// The shipped fixture events the benchmarks multiply (fixtures/*/*.jsonl, bad and sessions left out).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = new URL('../', import.meta.url).pathname;

export function fixtureLines(): string[] {
  const out: string[] = [];
  for (const dir of readdirSync(join(ROOT, 'fixtures'))) {
    if (dir === 'bad' || dir === 'sessions') continue;
    for (const f of readdirSync(join(ROOT, 'fixtures', dir))) {
      if (f.endsWith('.jsonl')) out.push(...readFileSync(join(ROOT, 'fixtures', dir, f), 'utf8').split('\n').filter((l) => l !== ''));
    }
  }
  return out;
}
