// Peak memory of replaying one long line (issue 31: one input line of N bytes should cost at
// most ~3N of extra RSS), against the same command on a one-line file in the same run (the
// process's own floor: Node, the engine). Runs the CLI as a user does, under GNU time.
//   npx tsx bench/long-line.ts [MB=100]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MB = Number(process.argv[2] ?? 100);
const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-long-line-'));
const bin = join(import.meta.dirname, '../bin/toolcanon.mjs');
const event = (command: string): string =>
  JSON.stringify({ type: 'tool_call', ts: '2026-12-01T00:00:00Z', harness: 'claude_code', session_id: 's', call_id: `c${command.length}`, tool: 'Bash', status: 'ok', input: { command } });

/** Peak RSS (MB) of a replay of `file` into a fresh database, from GNU time's %M (KB). */
function peak(file: string, label: string): number {
  const db = join(tmp, `db-${label}`);
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, bin, 'replay', file, '--db', db, '--allow-dead-letters'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`replay of ${label} exited ${r.status}: ${r.stderr}`);
  return Number(r.stderr.trim().split('\n').pop()) / 1024;
}

try {
  const small = join(tmp, 'small.jsonl');
  const long = join(tmp, 'long.jsonl');
  writeFileSync(small, `${event('ls')}\n`);
  writeFileSync(long, `${event('x'.repeat(MB * 1024 * 1024))}\n${event('ls')}\n`);
  const floor = peak(small, 'small');
  const withLine = peak(long, 'long');
  console.log(`one line of ${MB} MB (dead-lettered as oversized), replayed into the embedded engine`);
  console.log(`peak RSS, a one-line file:     ${floor.toFixed(0)} MB`);
  console.log(`peak RSS, with the long line:  ${withLine.toFixed(0)} MB`);
  console.log(`extra RSS / line size: ${((withLine - floor) / MB).toFixed(2)} (target <= 3)`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
