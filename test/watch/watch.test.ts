// `toolcanon watch` as a process on a real engine: a real Claude Code transcript appended in torn
// chunks while it runs and `report usage` reads through the engine it serves (and a new session
// folder appearing) ends with exactly the tables, and the report, of a one-shot import of the
// finished files, no dead letter; a restart mid-file (after SIGTERM, and
// after SIGKILL) resumes without losing or doubling anything; truncation, replacement (rotation)
// and deletion are said in one line each; SIGTERM prints one summary line and exits 0.
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, renameSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { makeTempDir } from '../helpers/db.ts';
import { Watch } from '../helpers/watch.ts';
import { dumpInChild, runCli, type TableDump } from '../helpers/worker.ts';

const CORPUS = corpusOrSkip('claude-code/projects/spotter', 'the watch tests (test/watch/watch.test.ts)');
const MAIN = CORPUS ? join(CORPUS, '258c7280-ae70-4798-800f-63464d01a85d.jsonl') : '';
const SUBAGENT = CORPUS ? join(CORPUS, '258c7280-ae70-4798-800f-63464d01a85d', 'subagents', 'agent-a881341.jsonl') : '';
const SHORT = CORPUS ? join(CORPUS, 'tool_heavy.jsonl') : '';

/** The tables of a one-shot import of `logs` into a fresh embedded database (a child process: one engine per process). */
async function oneShot(logs: string, db: string): Promise<TableDump> {
  const r = await runCli(['import', 'claude-code', logs, '--db', db, '--format', 'json']);
  expect(r.stderr).not.toMatch(/dead_letters/);
  expect(r.code).toBe(0);
  const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { metric: string; value: number });
  expect(rows.find((x) => x.metric === 'dead_letters')?.value).toBe(0);
  return dumpInChild(db);
}

/** Appends `bytes` to `path` in pieces cut anywhere (mid-line too), waiting after each for watch's cycle. */
async function appendTorn(w: Watch, path: string, bytes: Buffer, pieces: number): Promise<void> {
  let at = 0;
  for (let i = 1; i <= pieces; i++) {
    // Cut points spread over the data, off line boundaries on purpose (a prime stride).
    const end = i === pieces ? bytes.length : Math.min(bytes.length, Math.floor((bytes.length * i) / pieces) + 7919 * i % 97);
    if (end <= at) continue;
    const before = w.cycles();
    appendFileSync(path, bytes.subarray(at, end));
    at = end;
    await w.waitFor(/ claude-code: \d+ file\(s\) read/, before + 1);
  }
}

function stoppedLine(stdout: string): Record<string, number> {
  const m = /^watch stopped \(SIGTERM\): (.*); everything read is stored and recorded, a restart resumes from here\n$/.exec(stdout);
  if (!m) throw new Error(`not one summary line: ${JSON.stringify(stdout)}`);
  return Object.fromEntries((m[1] as string).split(', ').map((kv) => [kv.slice(0, kv.lastIndexOf(' ')), Number(kv.slice(kv.lastIndexOf(' ') + 1))]));
}

const tmp = makeTempDir('watch');
afterAll(() => tmp.cleanup());

describe.skipIf(CORPUS === null)('toolcanon watch on a real engine', () => {
  let main: Buffer;
  beforeAll(() => {
    main = readFileSync(MAIN);
  });

  it('a transcript appended in torn chunks while report usage reads through the served engine, and a new session folder, give the tables and the report of a one-shot import; SIGTERM: one line, exit 0', async () => {
    const logs = join(tmp.dir, 'a', 'logs');
    mkdirSync(join(logs, 'proj'), { recursive: true });
    const file = join(logs, 'proj', '258c7280-ae70-4798-800f-63464d01a85d.jsonl');
    writeFileSync(file, main.subarray(0, 1000)); // a torn first line: nothing to read yet
    const db = join(tmp.dir, 'a', 'db');
    const w = new Watch(['claude-code', logs, '--tail-settle-ms', '10000', '--db', db, '--rescan-ms', '3000']);
    await w.waitFor(/caught up: following/);
    // Half the transcript, then `report usage` reads through the engine watch serves meanwhile.
    const half = Math.floor(main.length / 2);
    await appendTorn(w, file, main.subarray(1000, half), 6);
    const mid = await runCli(['report', 'usage', '--db', db, '--format', 'json']);
    expect(mid.code, mid.stderr).toBe(0);
    expect(mid.stderr).toMatch(/through process \d+ \(toolcanon watch\)/);
    expect(mid.stdout.trim().length).toBeGreaterThan(0);
    await appendTorn(w, file, main.subarray(half), 6);
    // A new session folder with a subagent's transcript appears while watch runs.
    const sub = join(logs, 'proj', '258c7280-ae70-4798-800f-63464d01a85d', 'subagents');
    mkdirSync(sub, { recursive: true });
    const before = w.cycles();
    copyFileSync(SUBAGENT, join(sub, 'agent-a881341.jsonl'));
    await w.waitFor(/ claude-code: \d+ file\(s\) read/, before + 1);
    // A line torn at the end stays waiting (never a dead letter) until its newline comes.
    const extra = readFileSync(SHORT);
    const other = join(logs, 'proj', 'tool_heavy.jsonl');
    await appendTorn(w, other, extra, 3);
    // The files' last events are held until the files are still (--tail-settle-ms).
    expect(w.lines.filter((l) => /event\(s\) at files' ends held until/.test(l)).length).toBeGreaterThan(0);
    await w.settled();
    const live = await runCli(['report', 'usage', '--db', db, '--format', 'json']);
    expect(live.code, live.stderr).toBe(0);
    expect(live.stderr).toMatch(/through process \d+ \(toolcanon watch\)/);
    w.kill('SIGTERM');
    expect(await w.exited).toBe(0);
    const summary = stoppedLine(w.stdout);
    expect(summary['dead_letters']).toBe(0);
    expect(summary['malformed_records']).toBe(0);
    // What a file read again from before the events it held hands out again unchanged is not
    // handed out twice: every event counted once.
    expect(summary['duplicates_skipped']).toBe(0);
    expect(summary['events_held']).toBe(0);
    expect(summary['cycles']).toBeGreaterThan(10);
    expect(w.lines.filter((l) => /unterminated last line/.test(l)).length).toBeGreaterThan(0);
    const watched = await dumpInChild(db);
    const expected = await oneShot(logs, join(tmp.dir, 'a', 'oneshot'));
    expect(expected.get('tool_calls')?.length).toBeGreaterThan(50);
    expect(expected.get('dead_letters')).toEqual([]);
    expect(watched).toEqual(expected);
    // The report read through watch's engine at the end is the one-shot import's report.
    const reference = await runCli(['report', 'usage', '--db', join(tmp.dir, 'a', 'oneshot'), '--format', 'json']);
    expect(reference.code, reference.stderr).toBe(0);
    expect(live.stdout).toBe(reference.stdout);
  }, 600_000);

  it('resumes exactly after SIGTERM and after SIGKILL mid-file: nothing lost, nothing doubled', async () => {
    const logs = join(tmp.dir, 'b', 'logs');
    mkdirSync(logs, { recursive: true });
    const file = join(logs, 'resumed.jsonl');
    const db = join(tmp.dir, 'b', 'db');
    const third = Math.floor(main.length / 3);
    writeFileSync(file, main.subarray(0, third));
    let w = new Watch(['claude-code', logs, '--tail-settle-ms', '10000', '--db', db]);
    await w.waitFor(/caught up: following/);
    w.kill('SIGTERM');
    expect(await w.exited).toBe(0);
    const first = stoppedLine(w.stdout);
    // Appended while nothing watches, torn at the end.
    appendFileSync(file, main.subarray(third, 2 * third + 5));
    w = new Watch(['claude-code', logs, '--tail-settle-ms', '10000', '--db', db]);
    await w.waitFor(/caught up: following/);
    await appendTorn(w, file, main.subarray(2 * third + 5, 2 * third + 200_000), 3);
    w.kill('SIGKILL');
    await w.exited;
    appendFileSync(file, main.subarray(2 * third + 200_000));
    w = new Watch(['claude-code', logs, '--tail-settle-ms', '10000', '--db', db]);
    await w.waitFor(/caught up: following/);
    await w.settled();
    w.kill('SIGTERM');
    expect(await w.exited).toBe(0);
    expect(first['events_emitted']).toBeGreaterThan(0);
    const watched = await dumpInChild(db);
    expect(watched).toEqual(await oneShot(logs, join(tmp.dir, 'b', 'oneshot')));
    // Nothing doubled even without FINAL: each call's id is stored once.
    const plain = await runCli(['query', '--db', db, '--format', 'json', 'SELECT count() AS n, uniqExact(event_id) AS u FROM tool_calls SETTINGS final = 0']);
    const row = JSON.parse(plain.stdout) as { n: number | string; u: number | string };
    expect(Number(row.n)).toBe(Number(row.u));
  }, 600_000);

  it('says a truncated, a replaced (rotated) and a deleted file in one line each, and keeps the tables of the content read', async () => {
    const logs = join(tmp.dir, 'c', 'logs');
    mkdirSync(logs, { recursive: true });
    const file = join(logs, 'rot.jsonl');
    const text = readFileSync(SHORT);
    writeFileSync(file, text);
    const db = join(tmp.dir, 'c', 'db');
    const w = new Watch(['claude-code', logs, '--tail-settle-ms', '10000', '--db', db]);
    await w.waitFor(/caught up: following/);
    // Truncated to nothing, then written again: read again from its start.
    truncateSync(file, 0);
    appendFileSync(file, text.subarray(0, 100));
    await w.waitFor(/rot\.jsonl: truncated from \d+ to \d+ bytes/);
    let before = w.cycles();
    appendFileSync(file, text.subarray(100));
    await w.waitFor(/ claude-code: \d+ file\(s\) read/, before + 1);
    // Rotated: a new file renamed over the name (another inode).
    before = w.cycles();
    writeFileSync(join(tmp.dir, 'c', 'next.jsonl'), text);
    renameSync(join(tmp.dir, 'c', 'next.jsonl'), file);
    await w.waitFor(/rot\.jsonl: replaced by another file/);
    await w.waitFor(/ claude-code: \d+ file\(s\) read/, before + 1);
    // Its last events are held until it is still; deleted before, they would be lost with it.
    await w.settled();
    unlinkSync(file);
    await w.waitFor(/rot\.jsonl: deleted; what was read of it stays stored/);
    w.kill('SIGTERM');
    expect(await w.exited).toBe(0);
    const summary = stoppedLine(w.stdout);
    expect(summary['files_deleted']).toBe(1);
    expect(summary['dead_letters']).toBe(0);
    for (const what of [/truncated from/, /deleted; what was read/]) expect(w.lines.filter((l) => what.test(l))).toHaveLength(1);
    // What was read stays: the tables of the content read (the same content each time).
    const ref = join(tmp.dir, 'c', 'ref');
    mkdirSync(ref);
    writeFileSync(join(ref, 'rot.jsonl'), text);
    const expected = await oneShot(ref, join(tmp.dir, 'c', 'oneshot'));
    const watched = await dumpInChild(db);
    // The rows name where they came from (source is left out of the dump), so the file names may differ.
    expect(watched).toEqual(expected);
  }, 600_000);

  it('a burst of 1,500 turns appended at once to a session already stored is read in one cycle, through the owner, without a failed cycle', async () => {
    // The lookups of 3,000 events already applied or stored go to the engine through watch's own
    // proxy with their ids in the URL (once refused there: every cycle failed, the writer wedged).
    const logs = join(tmp.dir, 'd', 'logs');
    mkdirSync(join(logs, 'proj'), { recursive: true });
    const file = join(logs, 'proj', 'burst.jsonl');
    const turns = (from: number, n: number): string => {
      let out = '';
      for (let t = from; t < from + n; t++) {
        const at = (ms: number): string => new Date(Date.parse('2026-12-07T00:00:00Z') + t * 10 + ms).toISOString();
        const common = { sessionId: 'burst', isSidechain: false, cwd: '/w', version: '2.1.30' };
        const usage = { input_tokens: 3, cache_creation_input_tokens: 120, cache_read_input_tokens: 20_000 + t, output_tokens: 40 };
        for (const l of [
          { type: 'user', uuid: `u-${t}`, timestamp: at(0), message: { role: 'user', content: `step ${t}` } },
          { type: 'assistant', uuid: `a-${t}`, timestamp: at(1), requestId: `req_${t}`, message: { model: 'claude-opus-4-6', id: `msg_${t}`, type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${t}`, name: 'Bash', input: { command: `echo ${t}` } }], usage } },
          { type: 'user', uuid: `r-${t}`, timestamp: at(2), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${t}`, content: `out ${t}` }] } },
        ]) out += `${JSON.stringify({ ...l, ...common })}\n`;
      }
      return out;
    };
    writeFileSync(file, turns(0, 10));
    const db = join(tmp.dir, 'd', 'db');
    const w = new Watch(['claude-code', logs, '--tail-settle-ms', '10000', '--db', db]);
    await w.waitFor(/caught up: following/);
    const before = w.cycles();
    appendFileSync(file, turns(10, 1_500));
    await w.waitFor(/ claude-code: \d+ file\(s\) read/, before + 1);
    await w.settled();
    w.kill('SIGTERM');
    expect(await w.exited).toBe(0);
    expect(w.lines.filter((l) => /cycle failed/.test(l))).toEqual([]);
    const summary = stoppedLine(w.stdout);
    expect(summary['failed_cycles']).toBe(0);
    expect(summary['duplicates_skipped']).toBe(0);
    expect(summary['events_emitted']).toBe(2 * 1_510); // a usage and a call a turn, each once
    const ref = join(tmp.dir, 'd', 'ref');
    mkdirSync(ref);
    writeFileSync(join(ref, 'burst.jsonl'), readFileSync(file));
    const expected = await oneShot(ref, join(tmp.dir, 'd', 'oneshot'));
    expect(expected.get('tool_calls')).toHaveLength(1_510);
    expect(await dumpInChild(db)).toEqual(expected);
  }, 600_000);

  it('refuses a harness it does not know and a missing folder in one line', async () => {
    const bad = new Watch(['claude-cod', join(tmp.dir, 'nope')]);
    expect(await bad.exited).toBe(2);
    expect(bad.lines.join('\n')).toMatch(/did you mean claude-code/);
    const missing = new Watch(['claude-code', join(tmp.dir, 'nope')]);
    expect(await missing.exited).toBe(1);
    expect(missing.lines[0]).toMatch(/no such file or directory/);
  }, 120_000);
});
