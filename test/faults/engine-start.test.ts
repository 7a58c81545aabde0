// Issue 29 item 11: what the embedded engine prints in its own words when it cannot start or
// read, said in one line instead. Real CLI processes on a real engine:
// - two processes started at the same instant on one data directory: before, both found it free
//   and both started an engine; the loser's engine printed its two lines about the lock
//   ("Code: 76. DB::Exception: Cannot lock file ... Another server instance ...") and toolcanon
//   added that no other process might use the directory. Now the loser says which process uses it;
// - a damaged table definition (metadata/<db>/<table>.sql): before, the engine's syntax error
//   and "check that ... no other process uses" (a wrong diagnosis); now one line naming the file;
// - a damaged data part (bytes changed in data.bin): before, the engine's "Checksum doesn't
//   match" paragraph; now one line naming the file, the table and part, and the command that
//   sets the part aside; after it and a replay of the sources, the tables equal a clean run's.
import { closeSync, openSync, readFileSync, statSync, utimesSync, writeFileSync, writeSync, existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';
import { cli, committedParts, dumpAs, startCli } from '../helpers/faults.ts';
import { BIN, ROOT } from '../helpers/worker.ts';

const tmp = makeTempDir('engine-start');
afterAll(() => tmp.cleanup());
const asIs = [process.execPath, BIN];

const EVENT = '{"schema":"toolcanon.event/v1","type":"tool_call","ts":"2026-12-02T10:00:00.123Z","harness":"claude_code","session_id":"s-1","call_id":"c-1","tool":"Read","input":{"file_path":"README.md"},"status":"ok","output":"hello"}';
const input = join(tmp.dir, 'one.jsonl');
writeFileSync(input, `${EVENT}\n`);

/** The error line of a failed run: stderr holds only it (besides the lines naming the run and its database). */
function failureLine(stderr: string): string {
  const lines = stderr
    .trim()
    .split('\n')
    .filter((l) => !/^(Replaying |Importing |database: )/.test(l));
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m); // no stack trace
  expect(stderr).not.toMatch(/DB::Exception|Code: \d+\./); // not the engine's own text
  return lines[0] as string;
}

const busy = (db: string, pid: number | undefined): RegExp =>
  new RegExp(`^toolcanon: the data directory ${db} is in use by process ${pid} \\(toolcanon replay(, running since [0-9-]+ [0-9:]+)?\\): the embedded engine allows one process per directory; wait for it to finish \\(or stop it\\), or use another --db \\(or \\$TOOLCANON_DB\\)$`);

describe('two processes started at the same instant on one data directory', () => {
  it('the loser gets the one line naming the process that uses the directory, never the engine\'s lock text', async () => {
    const PAIRS = 8;
    let losers = 0;
    for (let i = 0; i < PAIRS; i++) {
      const db = join(tmp.dir, `race-${i}`);
      const args = ['replay', input, '--db', db, '--format', 'json', '--no-progress'];
      const [a, b] = [startCli(args), startCli(args)];
      const [ea, eb] = await Promise.all([a.exited, b.exited]);
      const runs = [
        { run: a, code: ea.code, other: b },
        { run: b, code: eb.code, other: a },
      ];
      expect(runs.some((r) => r.code === 0), `${a.stderr}\n${b.stderr}`).toBe(true);
      for (const r of runs) {
        expect(r.run.stderr).not.toMatch(/DB::Exception|Cannot lock file|could not open the data directory/);
        if (r.code === 0) continue;
        losers++;
        expect(r.code, r.run.stderr).toBe(1);
        expect(failureLine(r.run.stderr)).toMatch(busy(db, r.other.child.pid));
      }
      expect(existsSync(join(db, 'toolcanon.starting')), 'the start file is removed once the engine started').toBe(false);
    }
    // Started together, the second almost always meets the first (before, half of the pairs
    // showed the engine's text); a run where none did proves nothing.
    expect(losers, 'no pair overlapped: the race was not met').toBeGreaterThan(0);
  }, 300_000);

  it('a start file left by a process killed while it started its engine is not in the way', async () => {
    const db = join(tmp.dir, 'stale');
    const first = await cli(['replay', input, '--db', db, '--format', 'json', '--no-progress']);
    expect(first.code, first.stderr).toBe(0);
    const dead = startCli(['--version']);
    await dead.exited;
    const file = join(db, 'toolcanon.starting');
    writeFileSync(file, `${dead.child.pid}\n`);
    const old = new Date(Date.now() - 60_000);
    utimesSync(file, old, old);
    const again = await cli(['query', 'SELECT count() AS n FROM tool_calls FINAL', '--db', db, '--format', 'json']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe('{"n":1}');
    expect(existsSync(file)).toBe(false);
  }, 120_000);
});

describe('damaged files in the data directory', () => {
  it.each([
    ['truncated', (t: string) => t.slice(0, 200), 'truncated'],
    ['emptied', () => '', 'empty'],
    ['overwritten', () => 'garbage(((\n', 'not a table definition'],
  ])('a table definition %s: one line naming the file and what to do, exit 1', async (name, damage, problem) => {
    const db = join(tmp.dir, `meta-${name}`);
    const first = await cli(['replay', input, '--db', db, '--format', 'json', '--no-progress']);
    expect(first.code, first.stderr).toBe(0);
    const file = join(db, 'metadata', 'default', 'tool_calls.sql');
    writeFileSync(file, damage(readFileSync(file, 'utf8')));
    for (const args of [['report', 'tools'], ['replay', input]]) {
      const r = await cli([...args, '--db', db]);
      expect(r.code, r.stderr).toBe(1);
      expect(failureLine(r.stderr)).toBe(
        `toolcanon: the table definition ${file} in the data directory ${db} is damaged (${problem}), so the engine cannot start: restore the file from a backup, or move the directory aside (mv ${db} ${db}.damaged) and run replay or import again to rebuild it`,
      );
    }
  }, 120_000);

  it('a data part whose bytes changed: one line naming the file, table and part and the command that sets it aside; after it and a replay, the tables equal a clean run\'s', async () => {
    const fixtures = join(ROOT, 'fixtures');
    const cleanDb = join(tmp.dir, 'part-clean');
    const db = join(tmp.dir, 'part');
    for (const d of [cleanDb, db]) {
      const r = await cli(['replay', fixtures, '--db', d, '--format', 'json', '--no-progress']);
      expect(r.code, r.stderr).toBe(0);
    }
    // The largest part of tool_calls: every column's bytes but the first and last 100 changed.
    const parts = committedParts(db, 'tool_calls').map((p) => join(db, 'data', 'default', 'tool_calls', p));
    const part = parts.sort((x, y) => statSync(join(y, 'data.bin')).size - statSync(join(x, 'data.bin')).size)[0] as string;
    const dataBin = realpathSync(join(part, 'data.bin'));
    const size = statSync(dataBin).size;
    const fd = openSync(dataBin, 'r+');
    writeSync(fd, Buffer.alloc(size - 200, 0xff), 0, size - 200, 100);
    closeSync(fd);
    const partName = part.slice(part.lastIndexOf('/') + 1);

    const report = await cli(['report', 'tools', '--db', db]);
    expect(report.code, report.stderr).toBe(1);
    const line = failureLine(report.stderr);
    const detach = `toolcanon query "ALTER TABLE tool_calls DETACH PART '${partName}'" --db ${db}`;
    expect(line).toMatch(new RegExp(`^toolcanon: a data part of the data directory ${db} is damaged: ${dataBin} \\(table tool_calls, part ${partName}\\): (its checksum does not match|it cannot be decompressed|it is cut short); set the part aside with `));
    expect(line).toContain(`set the part aside with ${detach}, then replay or import its sources again to store its rows again (what is stored twice is kept once)`);

    // Do what it says.
    const set = await cli(['query', `ALTER TABLE tool_calls DETACH PART '${partName}'`, '--db', db]);
    expect(set.code, set.stderr).toBe(0);
    const again = await cli(['replay', fixtures, '--db', db, '--format', 'json', '--no-progress']);
    expect(again.code, again.stderr).toBe(0);
    expect(await dumpAs(db, asIs, process.env)).toEqual(await dumpAs(cleanDb, asIs, process.env));
  }, 300_000);

  it('a data part the engine sets aside as it starts (its count.txt damaged): said in one line naming the folder, once; after a replay, the tables equal a clean run\'s', async () => {
    const fixtures = join(ROOT, 'fixtures');
    const cleanDb = join(tmp.dir, 'start-clean');
    const db = join(tmp.dir, 'start');
    for (const d of [cleanDb, db]) {
      const r = await cli(['replay', fixtures, '--db', d, '--format', 'json', '--no-progress']);
      expect(r.code, r.stderr).toBe(0);
    }
    const parts = committedParts(db, 'tool_calls');
    const part = parts.sort((x, y) => statSync(join(db, 'data', 'default', 'tool_calls', y, 'data.bin')).size - statSync(join(db, 'data', 'default', 'tool_calls', x, 'data.bin')).size)[0] as string;
    writeFileSync(join(db, 'data', 'default', 'tool_calls', part, 'count.txt'), 'abc');

    const report = await cli(['report', 'tools', '--db', db, '--format', 'json']);
    expect(report.code, report.stderr).toBe(0);
    const folder = join(db, 'data', 'default', 'tool_calls', 'detached', `broken-on-start_${part}`);
    const notice = `toolcanon: warning: a data part of table tool_calls in the data directory ${db} was damaged: the engine set it aside as it started (${folder}) and its rows are no longer read; replay or import their sources again to store them again (what is stored twice is kept once), then delete that folder`;
    expect(report.stderr.split('\n')).toContain(notice);
    expect(report.stderr).not.toMatch(/DB::Exception/);
    const second = await cli(['query', 'SELECT count() AS n FROM tool_calls FINAL', '--db', db, '--format', 'json']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toContain('set it aside');

    const again = await cli(['replay', fixtures, '--db', db, '--format', 'json', '--no-progress']);
    expect(again.code, again.stderr).toBe(0);
    expect(await dumpAs(db, asIs, process.env)).toEqual(await dumpAs(cleanDb, asIs, process.env));
  }, 300_000);
});
