// Issue 10, faults: `replay` killed with SIGKILL in the middle of its input, then run again.
// Real CLI processes, a real embedded engine, a real SIGKILL after the engine committed part of
// the input (a committed part is a directory of its own, read from outside the process). The
// tables (FINAL) after the rerun equal those of a clean run, and the rerun says what was there.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';
import { cli, committedParts, metrics, startCli, waitUntil, writeReplayInput } from '../helpers/faults.ts';
import { dumpInChild, type TableDump } from '../helpers/worker.ts';

const GENERATED = 30_000;
const tmp = makeTempDir('kill-replay');
afterAll(() => tmp.cleanup());

/** What a dump holds as input events: tool calls, observed usage, MCP events, dead letters. */
function storedEvents(dump: TableDump): number {
  const observed = (dump.get('token_usage') ?? []).filter((r) => (JSON.parse(r) as { source: string }).source === 'observed').length;
  return (dump.get('tool_calls') ?? []).length + observed + (dump.get('mcp_events') ?? []).length + (dump.get('dead_letters') ?? []).length;
}

describe('replay killed with SIGKILL mid-file, then run again', () => {
  const input = writeReplayInput(join(tmp.dir, 'in'), GENERATED);
  const cleanDb = join(tmp.dir, 'clean');
  const killedDb = join(tmp.dir, 'killed');
  const args = (db: string): string[] => ['replay', input, '--db', db, '--format', 'json', '--no-progress'];

  it('stores exactly what a clean run stores, and the rerun says how much was already there', async () => {
    const clean = await cli(args(cleanDb));
    expect(clean.code, clean.stderr).toBe(0);
    const cleanMetrics = metrics(clean.stdout);
    expect(cleanMetrics['events_already_stored']).toBe(0);
    expect(clean.stderr).not.toContain('already stored');

    const killed = startCli(args(killedDb));
    // The last insert of a batch is token_usage: once it has a committed part, a batch is stored.
    const committed = await waitUntil(killed, () => committedParts(killedDb, 'token_usage').length > 0);
    expect(committed, `the run ended before it committed anything: ${killed.stderr}`).toBe(true);
    killed.child.kill('SIGKILL');
    expect((await killed.exited).signal).toBe('SIGKILL');

    const left = await dumpInChild(killedDb);
    const storedBefore = storedEvents(left);
    const total = cleanMetrics['events_read'] as number;
    expect(storedBefore).toBeGreaterThan(0);
    expect(storedBefore, 'the kill came after the whole input was stored: make the input bigger').toBeLessThan(total);

    const again = await cli(args(killedDb));
    expect(again.code, again.stderr).toBe(0);
    const m = metrics(again.stdout);
    expect(m['events_read']).toBe(total);
    expect((m['rows_written'] as number) + (m['dead_letters'] as number)).toBe(total);
    expect(m['events_already_stored']).toBe(storedBefore);
    expect(again.stderr).toContain(`already stored: ${storedBefore} of the ${total} event(s) read (by an earlier run, not written again); new: ${total - storedBefore}`);

    const [after, reference] = [await dumpInChild(killedDb), await dumpInChild(cleanDb)];
    for (const [table, rows] of reference) expect(after.get(table), table).toEqual(rows);
    expect((reference.get('threshold_breaches') ?? []).length).toBeGreaterThan(0);
    expect((reference.get('mcp_server_state') ?? []).length).toBeGreaterThan(0);
    expect((reference.get('discovery_events') ?? []).length).toBeGreaterThan(0);
  });
});
