// `toolcanon watch` live figures, in one run (not a timed test):
//  1. append-to-row latency: a Claude Code turn (prompt, streamed response with a tool_use, its
//     result: 2 events) appended N times at random gaps; the time from the append to watch's cycle
//     line, printed once the cycle's rows are stored and recorded. p50 / p95. And the time from
//     the append of a turn to the cycle that stored that turn's events: watch holds back a
//     response while it may still be streamed (until a line of the next response, or
//     --tail-settle-ms of stillness, 3 s here) and the events after it, so this one includes the
//     gap to the next turn (an agent loop's next request).
//  2. idle CPU: user + system time of the watch process, and of the engine it owns, over 60 s with
//     nothing written (no busy polling: the rescan runs every 10 s), as a share of one core.
//  3. soak: RECORDS raw records appended in bursts (a new session file every FILE_TURNS turns, as
//     sessions are bounded), RSS of the watch process sampled as it goes; then every event is
//     checked stored (tool_calls and observed usage through the owner).
// Usage: npx tsx bench/watch.ts [records=200000] [latency samples=60] [idle seconds=60]
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const RECORDS = Number(process.argv[2] ?? 200_000);
const SAMPLES = Number(process.argv[3] ?? 60);
const IDLE_S = Number(process.argv[4] ?? 60);
const FILE_TURNS = 5_000;
const ROOT = new URL('..', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-bench-watch-'));
const logs = join(tmp, 'logs');
const db = join(tmp, 'db');
mkdirSync(join(logs, 'proj'), { recursive: true });

let turn = 0;
/** One turn: 4 raw records, 2 events (the usage of the streamed response, the tool call). */
function turnLines(session: string): string {
  const t = turn++;
  const at = (s: number): string => new Date(Date.now() + s).toISOString();
  const common = { sessionId: session, isSidechain: false, cwd: '/work/repo', version: '2.1.30' };
  const usage = (out: number): unknown => ({ input_tokens: 3, cache_creation_input_tokens: 120, cache_read_input_tokens: 20_000 + t, output_tokens: out });
  const lines = [
    { type: 'user', uuid: `u-${t}`, timestamp: at(0), message: { role: 'user', content: `step ${t}` }, ...common },
    { type: 'assistant', uuid: `a-${t}-1`, timestamp: at(1), requestId: `req_${t}`, message: { model: 'claude-opus-4-6', id: `msg_${t}`, type: 'message', role: 'assistant', content: [{ type: 'text', text: 'ok' }], usage: usage(9) }, ...common },
    { type: 'assistant', uuid: `a-${t}-2`, timestamp: at(2), requestId: `req_${t}`, message: { model: 'claude-opus-4-6', id: `msg_${t}`, type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${t}`, name: 'Bash', input: { command: `echo ${t}` } }], usage: usage(40) }, ...common },
    { type: 'user', uuid: `r-${t}`, timestamp: at(3), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${t}`, content: `out ${t} ${'x'.repeat(200)}` }] }, ...common },
  ];
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

const TAIL_SETTLE_MS = 3000;
const child = spawn(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), 'watch', 'claude-code', logs, '--db', db, '--tail-settle-ms', String(TAIL_SETTLE_MS)], { stdio: ['ignore', 'pipe', 'pipe'] });
const lines: { at: number; text: string }[] = [];
let carry = '';
let waiters: (() => void)[] = [];
child.stderr.setEncoding('utf8').on('data', (t: string) => {
  carry += t;
  const parts = carry.split('\n');
  carry = parts.pop() ?? '';
  const now = performance.now();
  for (const p of parts) lines.push({ at: now, text: p });
  for (const w of waiters.splice(0)) w();
});
let stdout = '';
child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
const cycles = (): { at: number; text: string }[] => lines.filter((l) => / claude-code: \d+ file\(s\) read/.test(l.text));
async function until(pred: () => boolean, what: string, timeoutMs = 600_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}:\n${lines.map((l) => l.text).join('\n')}`);
    await new Promise<void>((r) => {
      waiters.push(r);
      setTimeout(r, 500);
    });
  }
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const cpuTicks = (pid: number): number => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(f[11]) + Number(f[12]); // utime + stime, in clock ticks (100 per second)
};
const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};

try {
  await until(() => lines.some((l) => /caught up: following/.test(l.text)), 'the start');
  const owner = JSON.parse(readFileSync(join(db, 'toolcanon.owner.json'), 'utf8')) as { enginePid: number; url: string };
  const pid = child.pid as number;

  // 1. Latency.
  const session = 'bench-latency';
  const file = join(logs, 'proj', `${session}.jsonl`);
  const latencies: number[] = [];
  const appendedAt: number[] = [];
  const cyclesBefore = cycles().length;
  for (let i = 0; i < SAMPLES; i++) {
    await sleep(200 + Math.random() * 600);
    const before = cycles().length;
    const t0 = performance.now();
    appendedAt.push(t0);
    appendFileSync(file, turnLines(session));
    await until(() => cycles().length > before, 'a cycle');
    latencies.push((cycles()[before] as { at: number }).at - t0);
  }
  console.log(`latency: ${SAMPLES} appends of one turn (2 events) to a stored, recorded cycle: p50 ${pct(latencies, 50).toFixed(0)} ms, p95 ${pct(latencies, 95).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms (target p95 <= 2000 ms)`);
  // The cycle that stored each turn's 2 events: the first whose running count of new events reaches it.
  const emitted = (): number[] => {
    let n = 0;
    return cycles().slice(cyclesBefore).map((c) => (n += Number(/, (\d+) new event\(s\)/.exec(c.text)?.[1] ?? 0)));
  };
  await until(() => (emitted().at(-1) ?? 0) >= SAMPLES * 2, 'the last turn handed out after the stillness');
  const running = emitted();
  const stored = appendedAt.map((t0, k) => {
    const i = running.findIndex((n) => n >= (k + 1) * 2);
    return (cycles()[cyclesBefore + i] as { at: number }).at - t0;
  });
  const inLoop = stored.slice(0, -1);
  console.log(`latency, append of a turn to its events stored: p50 ${pct(inLoop, 50).toFixed(0)} ms, p95 ${pct(inLoop, 95).toFixed(0)} ms while the next turns come (gaps 200-800 ms); the last turn ${stored.at(-1)?.toFixed(0)} ms (held for --tail-settle-ms ${TAIL_SETTLE_MS} of stillness)`);

  // 2. Idle CPU.
  await sleep(3000);
  const w0 = cpuTicks(pid);
  const e0 = cpuTicks(owner.enginePid);
  const c0 = cycles().length;
  await sleep(IDLE_S * 1000);
  const w1 = cpuTicks(pid);
  const e1 = cpuTicks(owner.enginePid);
  console.log(`idle ${IDLE_S} s: watch process ${(((w1 - w0) / 100 / IDLE_S) * 100).toFixed(2)} % of a core (${w1 - w0} ticks), its engine ${(((e1 - e0) / 100 / IDLE_S) * 100).toFixed(2)} % (${e1 - e0} ticks), cycles meanwhile ${cycles().length - c0} (target < 1 %)`);

  // 3. Soak.
  const turns = Math.ceil(RECORDS / 4);
  const rss: number[] = [rssMb(pid)];
  const started = performance.now();
  // Sampled every 5 s until every event is handed out (the appends run ahead of watch: it catches up).
  const sampler = setInterval(() => rss.push(rssMb(pid)), 5000);
  let written = 0;
  while (written < turns) {
    const s = `bench-soak-${Math.floor(written / FILE_TURNS)}`;
    let burst = '';
    for (let k = 0; k < 500 && written < turns; k++, written++) {
      if (Math.floor(written / FILE_TURNS) !== Math.floor((written - 0) / FILE_TURNS)) break;
      burst += turnLines(s);
    }
    appendFileSync(join(logs, 'proj', `${s}.jsonl`), burst);
    await sleep(50);
  }
  const appendedS = (performance.now() - started) / 1000;
  const events = (SAMPLES + turns) * 2;
  // Caught up when every event appended was handed out (the cycle count includes the events a
  // file read again from before what it held hands out again) and nothing is held any more
  // (each file's last turn after the stillness).
  const allEmitted = (): number => cycles().reduce((n, c) => n + Number(/, (\d+) new event\(s\)/.exec(c.text)?.[1] ?? 0), 0);
  const holding = (): boolean => / held until /.test(cycles().at(-1)?.text ?? '');
  await until(() => allEmitted() >= events && !holding(), 'every event handed out', 3_600_000);
  clearInterval(sampler);
  rss.push(rssMb(pid));
  const caughtUpS = (performance.now() - started) / 1000;
  child.kill('SIGTERM');
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  const summary = stdout.trim();
  const m = /events_emitted (\d+)/.exec(summary);
  const dead = /dead_letters (\d+)/.exec(summary)?.[1];
  // Flat: the highest RSS of the soak's second half against its first half's (the sample before
  // the soak, an idle watch, is left out of both).
  const during = rss.slice(1);
  const half = Math.max(1, Math.floor(during.length / 2));
  const firstHalfMax = Math.max(...during.slice(0, half));
  const secondHalfMax = Math.max(...during.slice(half));
  console.log(`soak: ${turns * 4} raw records (${turns * 2} events) appended in ${appendedS.toFixed(0)} s, all handed out after ${caughtUpS.toFixed(0)} s; RSS MB samples ${rss.map((r) => r.toFixed(0)).join(' ')}; before the soak ${rss[0]?.toFixed(0)}; highest in the first half ${firstHalfMax.toFixed(0)}, in the second half ${secondHalfMax.toFixed(0)} (ratio ${(secondHalfMax / firstHalfMax).toFixed(2)}; flat: <= 1.1)`);
  // What is stored, counted in the database once watch let it go: a call and an observed usage a turn.
  const count = (sql: string): number => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), 'query', '--db', db, '--format', 'json', sql], { encoding: 'utf8' });
    return Number((JSON.parse(r.stdout || '{}') as { n?: string | number }).n);
  };
  const calls = count('SELECT count() AS n FROM tool_calls');
  const usage = count("SELECT count() AS n FROM token_usage WHERE source = 'observed'");
  console.log(`stop: exit ${code}; events emitted ${m?.[1]} (with those handed out again) of ${events} appended; stored: ${calls} calls and ${usage} observed usages of ${events / 2} each; dead letters ${dead}; held at stop ${/events_held (\d+)/.exec(summary)?.[1]}`);
  console.log(`summary: ${summary}`);
} finally {
  if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
}
