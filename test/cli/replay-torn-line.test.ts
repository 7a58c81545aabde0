// Issue 29 item 7: a file still being written. `replay` of a file whose last line has no newline
// yet stored that torn line as an `invalid_json` dead letter for good, while the completed line
// later became a row. Now the unterminated last line is left unread (as import does) and the
// summary counts it; `--complete` says the files are finished; stdin's end is its end.
// The real CLI on lines of the shipped fixtures (fixtures/codex/calls.jsonl).
import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { leaveTornLastLines, listInputFiles } from '../../src/source/file.ts';
import { makeTempDir } from '../helpers/db.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('replay-torn');
afterAll(() => tmp.cleanup());

const LINES = readFileSync(join(ROOT, 'fixtures/codex/calls.jsonl'), 'utf8').split('\n').filter((l) => l.trim() !== '');

function toolcanon(args: string[], input?: string): { code: number | null; metrics: Record<string, unknown>; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args, '--format', 'json'], { cwd: tmp.dir, encoding: 'utf8', input });
  const metrics: Record<string, unknown> = {};
  if (args[0] === 'replay') {
    for (const line of r.stdout.trim().split('\n').filter(Boolean)) {
      const row = JSON.parse(line) as { metric: string; value: unknown };
      metrics[row.metric] = row.value;
    }
  }
  return { code: r.status, metrics, stdout: r.stdout, stderr: r.stderr };
}

function count(db: string, sql: string): number {
  const r = toolcanon(['query', sql, '--db', db]);
  expect(r.code, r.stderr).toBe(0);
  return Number((JSON.parse(r.stdout.trim()) as { n: number | string }).n);
}

describe('replay of a file still being written (issue 29 item 7)', () => {
  const first = LINES[0] as string;
  const second = LINES[1] as string;
  const third = LINES[2] as string;
  const cut = Math.floor(third.length / 2);

  it('leaves the torn last line unread, then reads it once its newline is written: one row, no dead letter', () => {
    const file = join(tmp.dir, 'growing.jsonl');
    const db = join(tmp.dir, 'db-growing');
    writeFileSync(file, `${first}\n${second}\n${third.slice(0, cut)}`);

    const before = toolcanon(['replay', file, '--db', db]);
    expect(before.code, before.stderr).toBe(0);
    expect(before.metrics).toMatchObject({ events_read: 2, dead_letters: 0, torn_last_lines_unread: 1 });
    expect(before.stderr).toContain(`left unread: 1 unterminated last line(s)`);
    expect(before.stderr).toContain(file);
    expect(count(db, 'SELECT count() AS n FROM dead_letters')).toBe(0);

    appendFileSync(file, `${third.slice(cut)}\n`);
    const after = toolcanon(['replay', file, '--db', db]);
    expect(after.code, after.stderr).toBe(0);
    expect(after.metrics['torn_last_lines_unread']).toBeUndefined();
    expect(after.metrics).toMatchObject({ events_read: 3, dead_letters: 0 });
    expect(count(db, 'SELECT count() AS n FROM tool_calls FINAL')).toBe(3);
    expect(count(db, 'SELECT count() AS n FROM dead_letters')).toBe(0);
  });

  it('with --complete the torn line is read as it is: a dead letter', () => {
    const file = join(tmp.dir, 'finished.jsonl');
    const db = join(tmp.dir, 'db-finished');
    writeFileSync(file, `${first}\n${second}\n${third.slice(0, cut)}`);
    const r = toolcanon(['replay', file, '--db', db, '--complete']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.metrics).toMatchObject({ events_read: 3, rows_written: 2, dead_letters: 1 });
    expect(r.metrics['torn_last_lines_unread']).toBeUndefined();
    expect(count(db, "SELECT count() AS n FROM dead_letters WHERE reason = 'invalid_json'")).toBe(1);
  });

  it("stdin's end is the input's end: a last line without a newline is read", () => {
    const db = join(tmp.dir, 'db-stdin');
    const r = toolcanon(['replay', '-', '--db', db], `${first}\n${second}\n${third}`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.metrics).toMatchObject({ events_read: 3, rows_written: 3, dead_letters: 0 });
    expect(r.metrics['torn_last_lines_unread']).toBeUndefined();
  });

  it('finds the last newline however far back it is, reads a blank tail, and a file of one unterminated line not at all', () => {
    const long = join(tmp.dir, 'long-tail.jsonl');
    const tail = 'x'.repeat(200_000); // over three of the 64 KiB chunks read back from the end
    writeFileSync(long, `${first}\n${tail}`);
    const blank = join(tmp.dir, 'blank-tail.jsonl');
    writeFileSync(blank, `${first}\n \t\r`);
    const single = join(tmp.dir, 'single.jsonl');
    writeFileSync(single, first);
    const whole = join(tmp.dir, 'whole.jsonl');
    writeFileSync(whole, `${first}\n`);
    const { files, torn } = leaveTornLastLines(listInputFiles([long, blank, single, whole]));
    const firstBytes = Buffer.byteLength(first) + 1;
    expect(torn).toEqual([
      { path: long, offset: firstBytes, bytes: tail.length },
      { path: single, offset: 0, bytes: firstBytes - 1 },
    ]);
    expect(files.map((f) => [f.bytes, f.limitBytes])).toEqual([
      [firstBytes, firstBytes],
      [firstBytes + 3, undefined],
      [0, 0],
      [firstBytes, undefined],
    ]);
  });

  it('import refuses --complete (a replay flag)', () => {
    const r = toolcanon(['import', 'codex', tmp.dir, '--complete']);
    expect(r.code).toBe(2);
  });
});
