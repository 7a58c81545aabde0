// Issue 10, faults: the disk of the data directory fills up while a replay writes. A real full
// disk: a small tmpfs mounted in a private user and mount namespace (`unshare -Urm`, no root
// needed where unprivileged user namespaces are allowed); the CLI runs inside it, then the tmpfs
// is made larger (the fix) and the same command runs again. Outputs go to files outside it.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';
import { cli, dumpAs, metrics, tmpfsSupport, writeReplayInput } from '../helpers/faults.ts';
import { BIN, DUMP_SQL } from '../helpers/worker.ts';

const tmp = makeTempDir('disk-full');
afterAll(() => tmp.cleanup());
const support = tmpfsSupport();
if (!support.ok) console.warn(`[disk-full] SKIPPED: no private tmpfs can be mounted here (${support.reason}); a file-size limit (ulimit -f) is no stand-in: the engine's background merges then write truncated parts`);

function bytesUnder(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? bytesUnder(p) : statSync(p).size;
  }
  return n;
}

/** Runs a shell script in a new user and mount namespace; resolves with its exit code. */
function inNamespace(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('unshare', ['-Urm', 'sh', '-c', script], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

describe.skipIf(!support.ok)('the disk fills up while a replay writes', () => {
  it('one line naming the directory, exit 1; after making room the rerun stores what a clean run stores', async () => {
    const input = writeReplayInput(join(tmp.dir, 'in'), 30_000);
    const cleanDb = join(tmp.dir, 'clean');
    const clean = await cli(['replay', input, '--db', cleanDb, '--format', 'json', '--no-progress']);
    expect(clean.code, clean.stderr).toBe(0);
    const reference = await dumpAs(cleanDb, [process.execPath, BIN], process.env);
    const cleanKiB = Math.ceil(bytesUnder(cleanDb) / 1024);

    const mnt = join(tmp.dir, 'mnt');
    const out = join(tmp.dir, 'out');
    const script = `
      set -u
      mkdir -p "$MNT" "$OUT"
      mount -t tmpfs -o size=${Math.max(1024, Math.floor(cleanKiB * 0.6))}k tmpfs "$MNT" || exit 90
      node "$BIN" replay "$INPUT" --db "$MNT/db" --format json --no-progress >"$OUT/first.out" 2>"$OUT/first.err"; echo $? >"$OUT/first.rc"
      df -k "$MNT" | tail -1 >"$OUT/df"
      mount -o remount,size=${cleanKiB * 4 + 65536}k "$MNT" || exit 91
      node "$BIN" replay "$INPUT" --db "$MNT/db" --format json --no-progress >"$OUT/second.out" 2>"$OUT/second.err"; echo $? >"$OUT/second.rc"
      node "$BIN" query --db "$MNT/db" --format json "$DUMP_SQL" >"$OUT/dump.out" 2>"$OUT/dump.err"; echo $? >"$OUT/dump.rc"
    `;
    const ns = await inNamespace(script, { ...process.env, MNT: mnt, OUT: out, BIN, INPUT: input, DUMP_SQL });
    expect(ns.code, ns.stderr).toBe(0);
    const read = (name: string): string => readFileSync(join(out, name), 'utf8');

    const db = join(mnt, 'db');
    expect(read('first.rc').trim(), read('first.err')).toBe('1');
    const lines = read('first.err').trim().split('\n').filter((l) => !l.startsWith('Replaying '));
    expect(lines, read('first.err')).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^toolcanon: the disk of the data directory ${db} is full \\((Cannot reserve [0-9.]+ \\w+|no space left on the device)\\): free some space there, or use another --db \\(or \\$TOOLCANON_DB\\), then run the command again: the batches already stored are kept and not doubled$`),
    );
    expect(read('first.err')).not.toMatch(/^\s+at /m);

    expect(read('second.rc').trim(), read('second.err')).toBe('0');
    const m = metrics(read('second.out'));
    const stored = m['events_already_stored'] as number;
    console.info(`[disk-full] tmpfs ${Math.floor(cleanKiB * 0.6)} KiB (clean run: ${cleanKiB} KiB); the full disk left ${stored} of ${m['events_read']} event(s) stored; df after: ${read('df').trim()}`);
    if (stored > 0) expect(read('second.err')).toContain(`already stored: ${stored} of the ${m['events_read']} event(s) read (by an earlier run`);
    expect(read('dump.rc').trim(), read('dump.err')).toBe('0');
    const after = new Map<string, string[]>();
    for (const line of read('dump.out').split('\n')) {
      if (line === '') continue;
      const { t, r } = JSON.parse(line) as { t: string; r: string };
      const rows = after.get(t);
      if (rows === undefined) after.set(t, [r]);
      else rows.push(r);
    }
    for (const rows of after.values()) rows.sort();
    expect(after).toEqual(reference);
  });
});
