// Issue 29 item 4: an import's answer is the same on every run over the same files. `import
// codex` over a Claude Code folder refused it once, recorded the file as read anyway, and the
// second run said files_unchanged and exited 0. Now a refused run records nothing; and a file
// recorded by an accepted run counts as the harness's, so a later run that reads only a
// rollout without events (a session opened and closed) is not refused either.
// The real CLI on real logs: the Claude Code fixture of this folder and Codex CLI rollouts of
// the shared corpus (takeshiD/cxstat @ 5c7129fb, see ../shared/corpus/README.md).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { makeTempDir } from '../helpers/db.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('import-verdict');
afterAll(() => tmp.cleanup());

function toolcanon(args: string[]): { code: number | null; metrics: Record<string, number>; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args, '--format', 'json'], { cwd: tmp.dir, encoding: 'utf8' });
  const metrics: Record<string, number> = {};
  for (const line of r.stdout.trim().split('\n').filter(Boolean)) {
    const row = JSON.parse(line) as { metric: string; value: number };
    metrics[row.metric] = row.value;
  }
  return { code: r.status, metrics, stderr: r.stderr };
}

/** The refusal line of a run's stderr (the "Importing …" line names the database, the same each run too). */
const refusal = (stderr: string): string[] => stderr.split('\n').filter((l) => l.startsWith('toolcanon: '));

describe('import: the same answer every time (issue 29 item 4)', () => {
  it('import codex over a Claude Code folder is refused on every run, and records nothing until accepted', () => {
    const dir = join(tmp.dir, 'claude-folder');
    mkdirSync(dir);
    copyFileSync(join(ROOT, 'test/importers/fixtures-claude-code/tool-search.jsonl'), join(dir, 'tool-search.jsonl'));
    const db = ['--db', join(tmp.dir, 'db-claude')];

    const first = toolcanon(['import', 'codex', dir, ...db]);
    expect(first.code).toBe(1);
    expect(refusal(first.stderr)).toEqual([expect.stringContaining('found no codex tool call or usage in them')]);
    expect(first.metrics['files_read']).toBe(1);

    const second = toolcanon(['import', 'codex', dir, ...db]);
    expect(second.code, 'the second run gives the first answer').toBe(1);
    expect(refusal(second.stderr)).toEqual(refusal(first.stderr));
    expect(second.metrics['files_read']).toBe(1);
    expect(second.metrics['files_unchanged']).toBe(0);

    // The state is per (harness, file): the right importer reads the file all the same.
    const claude = toolcanon(['import', 'claude-code', dir, ...db]);
    expect(claude.code, claude.stderr).toBe(0);
    expect(claude.metrics['files_read']).toBe(1);
    expect(claude.metrics['events_emitted']).toBeGreaterThan(0);

    // Accepted with --allow-dead-letters: recorded, and from then on unchanged.
    const accepted = toolcanon(['import', 'codex', dir, ...db, '--allow-dead-letters']);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.metrics['files_read']).toBe(1);
    const after = toolcanon(['import', 'codex', dir, ...db]);
    expect(after.code, after.stderr).toBe(0);
    expect(after.metrics['files_unchanged']).toBe(1);
  });

  const corpus = corpusOrSkip('codex/sessions/2025/09/18', 'import-verdict (Codex rollouts)');
  it.skipIf(corpus === null)('a Codex rollout without events added to an imported folder is read, recorded, and not refused', () => {
    const sessions = corpus ?? '';
    const dir = join(tmp.dir, 'codex-folder');
    mkdirSync(dir);
    const db = ['--db', join(tmp.dir, 'db-codex')];
    // 3 records (no tool call, no token count): found by a separate parse of each corpus file.
    const withoutEvents = join(sessions, 'rollout-2025-09-18T14-34-21-aa81cfb4-56e2-4c6e-853a-a1d3c9d2e6b9.jsonl');
    const withEvents = join(sessions, 'rollout-2025-09-18T14-47-54-4acfb809-27aa-45bb-9ca1-417a2e2336a9.jsonl');
    copyFileSync(withEvents, join(dir, basename(withEvents)));

    const first = toolcanon(['import', 'codex', dir, ...db]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.metrics['events_emitted']).toBeGreaterThan(0);

    copyFileSync(withoutEvents, join(dir, basename(withoutEvents)));
    const second = toolcanon(['import', 'codex', dir, ...db]);
    expect(second.code, second.stderr).toBe(0);
    expect(refusal(second.stderr)).toEqual([]);
    expect(second.metrics).toMatchObject({ files_seen: 2, files_read: 1, files_unchanged: 1, events_emitted: 0, records_read: 3 });

    const third = toolcanon(['import', 'codex', dir, ...db]);
    expect(third.code, third.stderr).toBe(0);
    expect(third.metrics).toMatchObject({ files_read: 0, files_unchanged: 2 });
  });
});
