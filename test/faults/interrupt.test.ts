// Issue 29 item 11: Ctrl-C (SIGINT) during a replay or an import. Real CLI processes on a real
// embedded engine, SIGINT once the engine committed part of the input: the run stops at its
// next write, prints one line saying how many events of its input are stored, and exits 130
// (128 + SIGINT), not killed by the signal with nothing said. The number is what the database
// holds (read from outside the process) and what the rerun reports as already stored.
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';
import { cli, committedParts, metrics, startCli, waitUntil, writeAcpCapture, writeReplayInput } from '../helpers/faults.ts';
import { BIN, dumpInChild, generateEvents, type TableDump } from '../helpers/worker.ts';

const tmp = makeTempDir('interrupt');
afterAll(() => tmp.cleanup());

/** What a dump holds as input events: tool calls, observed usage, MCP events, dead letters. */
function storedEvents(dump: TableDump): number {
  const observed = (dump.get('token_usage') ?? []).filter((r) => (JSON.parse(r) as { source: string }).source === 'observed').length;
  return (dump.get('tool_calls') ?? []).length + observed + (dump.get('mcp_events') ?? []).length + (dump.get('dead_letters') ?? []).length;
}

/** The lines of stderr that are not the run's opening lines (what it reads, which database). */
function reportLines(stderr: string): string[] {
  return stderr
    .trim()
    .split('\n')
    .filter((l) => l !== '' && !/^(Replaying |Importing |database: )/.test(l));
}

const LINE = /^toolcanon: interrupted: (\d+) event\(s\) of these inputs are stored(?: \((\d+) by this run\))?; run the same command again to store the rest \(what is stored already is kept once\)$/;

describe('SIGINT during replay and import', () => {
  it('replay: one line with the events stored (= the database, = what the rerun finds), exit 130, no stack', async () => {
    const input = writeReplayInput(join(tmp.dir, 'in'), 60_000);
    const db = join(tmp.dir, 'replay');
    const args = ['replay', input, '--db', db, '--format', 'json', '--no-progress'];
    const run = startCli(args);
    expect(await waitUntil(run, () => committedParts(db, 'token_usage').length > 0), `the run ended before it committed anything: ${run.stderr}`).toBe(true);
    run.child.kill('SIGINT');
    const exited = await run.exited;
    expect(exited, run.stderr).toEqual({ code: 130, signal: null });
    expect(run.stdout).toBe('');
    const lines = reportLines(run.stderr);
    expect(lines, run.stderr).toHaveLength(1);
    const m = LINE.exec(lines[0] as string);
    expect(m, lines[0]).not.toBeNull();
    const stored = Number(m?.[1]);
    expect(Number(m?.[2])).toBe(stored); // a new database: all of it by this run

    const dump = await dumpInChild(db);
    expect(storedEvents(dump)).toBe(stored);
    expect(stored).toBeGreaterThan(0);

    const again = await cli(args);
    expect(again.code, again.stderr).toBe(0);
    const summary = metrics(again.stdout);
    expect(stored, 'the interrupt came after everything was stored: make the input bigger').toBeLessThan(summary['events_read'] as number);
    expect(summary['events_already_stored']).toBe(stored);
  }, 300_000);

  it('import: the same line, exit 130; the rerun stores the rest', async () => {
    const logs = join(tmp.dir, 'captures');
    mkdirSync(logs);
    const calls = 45_000;
    writeAcpCapture(join(logs, 'session.jsonl'), calls);
    const db = join(tmp.dir, 'import');
    const args = ['import', 'acp', logs, '--db', db, '--format', 'json', '--no-progress'];
    const run = startCli(args);
    expect(await waitUntil(run, () => committedParts(db, 'token_usage').length > 0), `the import ended before it committed anything: ${run.stderr}`).toBe(true);
    run.child.kill('SIGINT');
    expect(await run.exited, run.stderr).toEqual({ code: 130, signal: null });
    const lines = reportLines(run.stderr);
    expect(lines, run.stderr).toHaveLength(1);
    const m = LINE.exec(lines[0] as string);
    expect(m, lines[0]).not.toBeNull();
    const stored = Number(m?.[1]);
    const dump = await dumpInChild(db);
    expect((dump.get('tool_calls') ?? []).length + (dump.get('dead_letters') ?? []).length).toBe(stored);
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(calls + calls / 1000);

    const again = await cli(args);
    expect(again.code, again.stderr).toBe(0);
    expect(metrics(again.stdout)).toMatchObject({ events_emitted: calls, events_already_stored: stored });
  }, 300_000);

  it('replay - (stdin, through the child bin/toolcanon.mjs starts for it): the line says stdin is not counted, exit 130', async () => {
    const file = join(tmp.dir, 'stdin.jsonl');
    writeFileSync(file, `${generateEvents('sigint-stdin', 60_000, 60).lines.join('\n')}\n`);
    const db = join(tmp.dir, 'stdin');
    const fd = openSync(file, 'r');
    const run = startCli(['replay', '-', '--db', db, '--no-progress'], process.env, [process.execPath, BIN], fd);
    closeSync(fd);
    const child = run.child;
    expect(await waitUntil(run, () => committedParts(db, 'token_usage').length > 0), `the run ended before it committed anything: ${run.stderr}`).toBe(true);
    child.kill('SIGINT');
    expect(await run.exited, run.stderr).toEqual({ code: 130, signal: null });
    expect(reportLines(run.stderr)).toEqual([
      "toolcanon: interrupted: stdin's events up to the last batch written (not counted: stdin has no name) are stored; run the same command again to store the rest (what is stored already is kept once)",
    ]);
  }, 300_000);
});
