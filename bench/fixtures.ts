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

/**
 * `n` events made of the fixtures: each fixture line again and again, with a session id of its
 * own per round and no event id (so each is a distinct event with a derived id).
 */
export function multipliedEvents(n: number): string[] {
  const base = fixtureLines();
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const event = JSON.parse(base[i % base.length] as string) as Record<string, unknown>;
    event['session_id'] = `${String(event['session_id'])}-${Math.floor(i / base.length)}`;
    delete event['event_id'];
    lines.push(JSON.stringify(event));
  }
  return lines;
}
