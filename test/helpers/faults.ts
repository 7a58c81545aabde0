// Helpers for the fault tests: the real CLI as a child process (killed, starved of disk, run as
// an unprivileged user), inputs big enough to be cut in the middle, and the engine's commit
// points read from the data directory (a committed MergeTree part is a directory of its own).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, DUMP_SQL, ROOT, generateEvents } from './worker.ts';

export interface CliRun {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `toolcanon <args>` (stdin closed, or the given file descriptor), collecting its output. */
export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = process.env, command: readonly string[] = [process.execPath, BIN], stdin: 'ignore' | number = 'ignore'): CliRun {
  const [file, ...pre] = command as [string, ...string[]];
  const child = spawn(file, [...pre, ...args], { cwd: ROOT, stdio: [stdin, 'pipe', 'pipe'], env });
  const run: CliRun = {
    child,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal }))),
  };
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (run.stdout += c));
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (run.stderr += c));
  return run;
}

/** Runs `toolcanon <args>` to the end. */
export async function cli(args: readonly string[], env: NodeJS.ProcessEnv = process.env, command?: readonly string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const run = startCli(args, env, command);
  const { code, signal } = await run.exited;
  return { code, signal, stdout: run.stdout, stderr: run.stderr };
}

/** Summary rows of a `--format json` run, by metric. */
export function metrics(stdout: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const row = JSON.parse(line) as { metric?: string; value?: unknown };
    if (row.metric !== undefined) out[row.metric] = Number(row.value);
  }
  return out;
}

/** Committed parts of a table of an embedded data directory (`tmp_*` parts are not committed). */
export function committedParts(db: string, table: string): string[] {
  const dir = join(db, 'data', 'default', table);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((p) => /^[0-9a-z]+_[0-9]+_[0-9]+_[0-9]+(?:_[0-9]+)?$/.test(p));
}

/** Polls until `probe` is true or the process exits (then false). */
export async function waitUntil(run: CliRun, probe: () => boolean, timeoutMs = 60_000): Promise<boolean> {
  let exited = false;
  void run.exited.then(() => (exited = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (probe()) return true;
    if (exited) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out after ${timeoutMs} ms; stderr so far:\n${run.stderr}`);
}

/**
 * A replay input of every kind of event: the shipped fixtures (tool calls of every harness,
 * usage and breaches, MCP lifecycle, discovery, dead letters; not the 10 MiB poison line) in
 * `a-fixtures.jsonl`, then `n` generated tool calls in `b-generated.jsonl`.
 */
export function writeReplayInput(dir: string, n: number): string {
  mkdirSync(dir, { recursive: true });
  const parts: Buffer[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.jsonl') && e.name !== 'oversized-field.jsonl') {
        const bytes = readFileSync(p);
        parts.push(bytes, bytes[bytes.length - 1] === 0x0a ? Buffer.alloc(0) : Buffer.from('\n'));
      }
    }
  };
  walk(join(ROOT, 'fixtures'));
  writeFileSync(join(dir, 'a-fixtures.jsonl'), Buffer.concat(parts));
  writeFileSync(join(dir, 'b-generated.jsonl'), `${generateEvents('kill', n, 60).lines.join('\n')}\n`);
  return dir;
}

/** An ACP capture (bare session/update lines) of `n` Read calls, each announced then completed. */
export function writeAcpCapture(file: string, n: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const sessionId = `acp-s-${i % 50}`;
    const toolCallId = `call-${i}`;
    const ts = new Date(Date.UTC(2026, 11, 3, 9, 0, 0) + i * 1000).toISOString();
    const meta = { claudeCode: { toolName: 'Read' } };
    lines.push(JSON.stringify({ ts, jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'tool_call', toolCallId, title: 'Read file', kind: 'read', status: 'pending', rawInput: { file_path: `/repo/src/f${i % 97}.ts` }, _meta: meta } } }));
    lines.push(JSON.stringify({ ts, jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'tool_call_update', toolCallId, status: 'completed', content: [{ type: 'content', content: { type: 'text', text: `line ${i}: ${'lorem ipsum dolor sit amet '.repeat(3 + (i % 11))}` } }], _meta: meta } } }));
    if (i % 1000 === 999) lines.push('{"jsonrpc":"2.0","method":"session/update","params":'); // a malformed record now and then
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** True when this process runs as root (permission bits do not stop it: tests drop to nobody). */
export const IS_ROOT = process.getuid?.() === 0;

/**
 * The command that runs the CLI as an unprivileged user when this process is root (setpriv to
 * nobody; the checkout must be readable by it), else as is. undefined when root cannot drop.
 */
export function unprivilegedCommand(): string[] | undefined {
  if (!IS_ROOT) return [process.execPath, BIN];
  const probe = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', `require('fs').accessSync(${JSON.stringify(BIN)})`], { encoding: 'utf8' });
  if (probe.status !== 0) return undefined;
  return ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN];
}

/** An environment for a child run as nobody: a HOME it may write (tsx keeps a cache). */
export function unprivilegedEnv(home: string): NodeJS.ProcessEnv {
  return { ...process.env, HOME: home, TMPDIR: home };
}

/**
 * Whether a private tmpfs can be mounted here (a user and mount namespace: `unshare -Urm`);
 * the reason when not.
 */
export function tmpfsSupport(): { ok: true } | { ok: false; reason: string } {
  const r = spawnSync('unshare', ['-Urm', 'sh', '-c', 'd=$(mktemp -d) && mount -t tmpfs -o size=1m tmpfs "$d" && umount "$d" && rmdir "$d"'], { encoding: 'utf8' });
  if (r.error) return { ok: false, reason: `unshare: ${r.error.message}` };
  return r.status === 0 ? { ok: true } : { ok: false, reason: `unshare -Urm + mount -t tmpfs failed: ${r.stderr.trim()}` };
}

/**
 * Every analytics table of a data directory (FINAL, as DUMP_SQL reads them), read by a CLI
 * process run with `command` (as the user who owns the directory: another user's engine would
 * leave files its owner cannot write).
 */
export async function dumpAs(db: string, command: readonly string[], env: NodeJS.ProcessEnv): Promise<Map<string, string[]>> {
  const r = await cli(['query', '--db', db, '--format', 'json', DUMP_SQL], env, command);
  if (r.code !== 0) throw new Error(`toolcanon query failed (${r.code}): ${r.stderr}`);
  const out = new Map<string, string[]>();
  for (const line of r.stdout.split('\n')) {
    if (line === '') continue;
    const { t, r: row } = JSON.parse(line) as { t: string; r: string };
    const rows = out.get(t);
    if (rows === undefined) out.set(t, [row]);
    else rows.push(row); // not a copy per row: a 30 k-row table took ~50 s that way
  }
  for (const rows of out.values()) rows.sort();
  return out;
}

/**
 * The lines toolcanon may give when `db` is removed under it (see removeWhileInUse). Which one
 * depends on when its next request meets the removal: after it (the directory is gone, or the
 * engine made a new one: "removed (or replaced)") or during it (the directory is still there
 * and its files are going: "files … were removed"). Both name the directory and say to run again.
 */
export function removedDataDirLines(db: string, prefix = 'toolcanon: '): string[] {
  return [
    `${prefix}the data directory ${db} was removed (or replaced) while toolcanon was using it: what was written since is lost; run the command again (it creates the directory anew; what a rerun writes twice is stored once)`,
    `${prefix}files of the data directory ${db} were removed while toolcanon was using it: nothing more was written; run the command again (what a rerun writes twice is stored once), or use another --db (or $TOOLCANON_DB)`,
  ];
}
