// Issue 10, faults: the embedded engine's data directory is not usable, or stops being usable
// while a replay writes to it. Real CLI processes on a real engine: a path that is a file, a
// parent that is a file, a read-only directory and a parent nobody may write (run as an
// unprivileged user: root ignores permission bits), a second process on a directory in use, and
// the directory removed while a replay writes. Each is one line naming the directory and what to
// do, exit 1, no stack trace; a rerun once it is fixed stores what a clean run stores.
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir, removeWhileInUse } from '../helpers/db.ts';
import { cli, committedParts, dumpAs, IS_ROOT, metrics, removedDataDirLines, startCli, unprivilegedCommand, unprivilegedEnv, waitUntil, writeReplayInput } from '../helpers/faults.ts';
import { BIN } from '../helpers/worker.ts';

const tmp = makeTempDir('data-dir');
afterAll(() => {
  chmodSync(tmp.dir, 0o700);
  tmp.cleanup();
});
const asIs = [process.execPath, BIN];

/** The error line of a failed run: stderr holds only it (and, for replay, the line before work starts). */
function failureLine(stderr: string): string {
  const lines = stderr.trim().split('\n').filter((l) => !l.startsWith('Replaying '));
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m); // no stack trace
  expect(stderr).not.toMatch(/Code: \d+\. DB::/); // not the engine's own dump
  return lines[0] as string;
}

describe('a data directory that cannot be used', () => {
  const fixtures = join(tmp.dir, 'fixture.jsonl');
  writeFileSync(fixtures, `${'{"schema":"toolcanon.event/v1","type":"tool_call","ts":"2026-12-02T10:00:00.123Z","harness":"claude_code","session_id":"s-1","call_id":"c-1","tool":"Read","input":{"file_path":"README.md"},"status":"ok","output":"hello"}'}\n`);

  it('a path that is a file, or under a file: one line each, exit 1, nothing created', async () => {
    const file = join(tmp.dir, 'a-file');
    writeFileSync(file, 'not a directory\n');
    const r = await cli(['replay', fixtures, '--db', file]);
    expect(r.code).toBe(1);
    expect(failureLine(r.stderr)).toBe(`toolcanon: the data directory ${file} is a file, not a directory: move the file away or use another --db (or $TOOLCANON_DB)`);
    const under = join(file, 'db');
    const q = await cli(['query', 'SELECT 1', '--db', under]);
    expect(q.code).toBe(1);
    expect(failureLine(q.stderr)).toBe(`toolcanon: cannot create the data directory ${under}: ${file} is a file, not a directory: use another --db (or $TOOLCANON_DB)`);
    expect(readFileSync(file, 'utf8')).toBe('not a directory\n');
  });

  it('missing parents are created (a first run needs .toolcanon/db); one that cannot be is covered below', async () => {
    const deep = join(tmp.dir, 'new', 'parents', 'db');
    const ok = await cli(['replay', fixtures, '--db', deep, '--format', 'json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(metrics(ok.stdout)['rows_written']).toBe(1);
  });

  const command = unprivilegedCommand();
  const who = IS_ROOT ? 'as nobody (this process is root, which permission bits do not stop)' : 'as this user';
  if (command === undefined) console.warn(`[data-dir] SKIPPED the permission cases: running as root and setpriv cannot drop to nobody here`);

  it.skipIf(command === undefined)(`read-only: a data directory and a parent it cannot write, ${who}; after chmod the rerun doubles nothing`, async () => {
    const cmd = command as string[];
    // A directory the unprivileged user owns (the temporary folder is root's, mode 0700).
    chmodSync(tmp.dir, 0o755);
    const home = join(tmp.dir, 'nobody');
    mkdirSync(join(home, 'home'), { recursive: true });
    if (IS_ROOT) {
      chownSync(home, 65534, 65534);
      chownSync(join(home, 'home'), 65534, 65534);
    }
    const env = unprivilegedEnv(join(home, 'home'));
    const db = join(home, 'db');
    const first = await cli(['replay', fixtures, '--db', db, '--format', 'json'], env, cmd);
    expect(first.code, first.stderr).toBe(0);
    const before = await dumpAs(db, cmd, env);

    chmodSync(db, 0o555);
    const ro = await cli(['replay', fixtures, '--db', db], env, cmd);
    expect(ro.code).toBe(1);
    expect(failureLine(ro.stderr)).toMatch(
      new RegExp(`^toolcanon: the data directory ${db} is not writable( for user \\d+)? \\(permission denied\\): make it writable \\(chmod u\\+w, or chown it to this user\\) or use another --db \\(or \\$TOOLCANON_DB\\)$`),
    );
    const reader = await cli(['report', 'tools', '--db', db], env, cmd);
    expect(reader.code).toBe(1); // the engine writes even to read: same line
    expect(failureLine(reader.stderr)).toContain(`the data directory ${db} is not writable`);

    // A missing data directory under a parent this user cannot write.
    const locked = join(home, 'locked');
    mkdirSync(locked);
    if (IS_ROOT) chownSync(locked, 65534, 65534);
    chmodSync(locked, 0o555);
    const sub = join(locked, 'sub', 'db');
    const parent = await cli(['replay', fixtures, '--db', sub], env, cmd);
    expect(parent.code).toBe(1);
    expect(failureLine(parent.stderr)).toMatch(new RegExp(`^toolcanon: cannot create the data directory ${sub}: its parent ${locked} is not writable( for user \\d+)? \\(permission denied\\): create ${sub} with write permission for this user, or use another --db`));

    chmodSync(db, 0o755);
    const again = await cli(['replay', fixtures, '--db', db, '--format', 'json'], env, cmd);
    expect(again.code, again.stderr).toBe(0);
    expect(metrics(again.stdout)['events_already_stored']).toBe(1);
    expect(await dumpAs(db, cmd, env)).toEqual(before);
  });
});

describe('a data directory in use, or removed, while a replay writes to it', () => {
  const input = writeReplayInput(join(tmp.dir, 'in'), 30_000);
  const cleanDb = join(tmp.dir, 'busy');
  // What one clean run stores: made by whichever test needs it first (each test stands alone).
  let referenceRun: Promise<Map<string, string[]>> | undefined;
  const reference = (): Promise<Map<string, string[]>> =>
    (referenceRun ??= (async () => {
      const db = join(tmp.dir, 'clean');
      const clean = await cli(['replay', input, '--db', db, '--format', 'json', '--no-progress']);
      if (clean.code !== 0) throw new Error(`the clean replay failed: ${clean.stderr}`);
      return dumpAs(db, asIs, process.env);
    })());

  it('a second process gets one line naming the directory, the process holding it and what to do', async () => {
    const holder = startCli(['replay', input, '--db', cleanDb, '--format', 'json', '--no-progress']);
    // The line comes once the sink is open: the engine holds the directory from then on.
    expect(await waitUntil(holder, () => holder.stderr.includes('Replaying '))).toBe(true);
    const second = await cli(['query', 'SELECT count() FROM tool_calls', '--db', cleanDb]);
    const line = failureLine(second.stderr);
    expect(second.code).toBe(1);
    expect(line).toMatch(
      new RegExp(`^toolcanon: the data directory ${cleanDb} is in use by process ${holder.child.pid} \\(toolcanon replay, running since [0-9-]+ [0-9:]+\\): the embedded engine allows one process per directory; wait for it to finish \\(or stop it\\), or use another --db \\(or \\$TOOLCANON_DB\\)$`),
    );
    const writer = await cli(['replay', input, '--db', cleanDb]);
    expect(writer.code).toBe(1);
    expect(failureLine(writer.stderr)).toContain(`is in use by process ${holder.child.pid}`);
    expect((await holder.exited).code, holder.stderr).toBe(0);
    const after = await cli(['query', 'SELECT count() AS n FROM tool_calls FINAL', '--db', cleanDb, '--format', 'json']);
    expect(after.code, after.stderr).toBe(0);
    expect(await dumpAs(cleanDb, asIs, process.env)).toEqual(await reference());
  });

  it('removed while writing: one line, exit 1 (never a success that stored nothing); the rerun stores what a clean run does', async () => {
    const db = join(tmp.dir, 'removed');
    const run = startCli(['replay', input, '--db', db, '--format', 'json', '--no-progress']);
    expect(await waitUntil(run, () => committedParts(db, 'tool_calls').length > 0), run.stderr).toBe(true);
    removeWhileInUse(db);
    const { code } = await run.exited;
    expect(code, run.stderr).toBe(1);
    expect(removedDataDirLines(db)).toContain(failureLine(run.stderr));
    const again = await cli(['replay', input, '--db', db, '--format', 'json', '--no-progress']);
    expect(again.code, again.stderr).toBe(0);
    expect(await dumpAs(db, asIs, process.env)).toEqual(await reference());
  });

  it('emptied while writing, the directory itself kept (the engine makes the folders of its next part again): one line, exit 1; the rerun stores what a clean run does', async () => {
    // What a removal that the engine keeps writing through leaves (rm -rf retried on ENOTEMPTY):
    // the top directory, same inode, its files gone. Before the check of metadata/, this replay
    // exited 0 with nothing stored.
    const db = join(tmp.dir, 'emptied');
    const run = startCli(['replay', input, '--db', db, '--format', 'json', '--no-progress']);
    expect(await waitUntil(run, () => committedParts(db, 'tool_calls').length > 0), run.stderr).toBe(true);
    for (const entry of readdirSync(db)) removeWhileInUse(join(db, entry));
    const { code } = await run.exited;
    expect(code, run.stderr).toBe(1);
    expect(removedDataDirLines(db)).toContain(failureLine(run.stderr));
    rmSync(db, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    const again = await cli(['replay', input, '--db', db, '--format', 'json', '--no-progress']);
    expect(again.code, again.stderr).toBe(0);
    expect(await dumpAs(db, asIs, process.env)).toEqual(await reference());
  });
});
