// Issue 10, faults: `import` killed with SIGKILL in the middle of a log file, then run again.
// A generated ACP capture (two records per call, a malformed record now and then), a real
// SIGKILL once the engine committed a batch. The import records a file only after all its
// events are stored, so the rerun reads the file again: the tables (FINAL) equal a clean
// import's, and the summary says how many of its events were already stored.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';
import { cli, committedParts, metrics, startCli, waitUntil, writeAcpCapture } from '../helpers/faults.ts';
import { dumpInChild } from '../helpers/worker.ts';

const CALLS = 45_000;
const tmp = makeTempDir('kill-import');
afterAll(() => tmp.cleanup());

describe('import killed with SIGKILL mid-file, then run again', () => {
  const logs = join(tmp.dir, 'captures');
  mkdirSync(logs);
  writeAcpCapture(join(logs, 'session.jsonl'), CALLS);
  const cleanDb = join(tmp.dir, 'clean');
  const killedDb = join(tmp.dir, 'killed');
  const args = (db: string): string[] => ['import', 'acp', logs, '--db', db, '--format', 'json', '--no-progress'];

  it('stores exactly what a clean import stores, and the rerun says how much was already there', async () => {
    const clean = await cli(args(cleanDb));
    expect(clean.code, clean.stderr).toBe(0);
    const c = metrics(clean.stdout);
    expect(c['events_emitted']).toBe(CALLS);
    expect(c['malformed_records']).toBe(CALLS / 1000);
    expect(c['events_already_stored']).toBe(0);

    const killed = startCli(args(killedDb));
    const committed = await waitUntil(killed, () => committedParts(killedDb, 'token_usage').length > 0);
    expect(committed, `the import ended before it committed anything: ${killed.stderr}`).toBe(true);
    killed.child.kill('SIGKILL');
    expect((await killed.exited).signal).toBe('SIGKILL');

    const left = await dumpInChild(killedDb);
    const storedBefore = (left.get('tool_calls') ?? []).length + (left.get('dead_letters') ?? []).length;
    expect(storedBefore).toBeGreaterThan(0);
    expect(storedBefore, 'the kill came after everything was stored: make the capture bigger').toBeLessThan(CALLS + CALLS / 1000);

    const again = await cli(args(killedDb));
    expect(again.code, again.stderr).toBe(0);
    const m = metrics(again.stdout);
    expect(m).toMatchObject({ files_read: 1, files_unchanged: 0, events_emitted: CALLS, events_already_imported: 0, events_already_stored: storedBefore });
    expect(again.stderr).toContain(`already stored: ${storedBefore} of the ${CALLS} event(s) read (by an earlier run, not written again); new: ${CALLS - storedBefore}`);

    const [after, reference] = [await dumpInChild(killedDb), await dumpInChild(cleanDb)];
    for (const [table, rows] of reference) expect(after.get(table), table).toEqual(rows);

    // Now recorded: a third run finds the file unchanged and stores nothing again.
    const third = await cli(args(killedDb));
    expect(metrics(third.stdout)).toMatchObject({ files_unchanged: 1, events_emitted: 0, events_already_stored: 0 });
    expect(third.stderr).not.toContain('already stored');
  });
});
