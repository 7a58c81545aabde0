// Where a step's CPU time went, by thread, as Linux counts it (/proc/self/task/<tid>/stat):
// the main thread (JavaScript: decode, encode, accounting); V8's helper threads (concurrent and
// parallel garbage collection, background compilation); libuv's thread pool, where chdb runs
// every query of the embedded engine (and Node its file reads and writes); and the engine's own
// threads (its query pipelines and background pools, including any that ended during the step:
// the process's total less the others). V8's helpers and libuv's pool are all named "node":
// the pool is told apart by giving it known work (cpuSplit's calibration). On a machine of
// `cores` cores, no schedule can finish the step's work faster than max(main, total / cores):
// that bound, turned into events/s, is the best the same work could reach with perfect overlap.
import { pbkdf2 } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux this runs on

interface ThreadTimes {
  readonly comm: string;
  readonly seconds: number;
}

function threads(): Map<number, ThreadTimes> {
  const out = new Map<number, ThreadTimes>();
  for (const tid of readdirSync('/proc/self/task')) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // The name is in parentheses and may hold spaces; the fields after it are space-separated.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    const seconds = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
    out.set(Number(tid), { comm, seconds });
  }
  return out;
}

export interface CpuSplit {
  readonly main: number;
  /** V8's helper threads: garbage collection, background compilation. */
  readonly v8: number;
  /** libuv's pool: the engine's queries (chdb runs them there) and file I/O. */
  readonly pool: number;
  /** The engine's own threads. */
  readonly engine: number;
  readonly total: number;
}

/** libuv's pool, found once: its threads live as long as the process. */
let poolThreads: Promise<Set<number>> | undefined;

/**
 * The threads of libuv's pool: those that take CPU while the pool runs PBKDF2 (pool work only)
 * on every one of its threads at once.
 */
async function findLibuvPool(): Promise<Set<number>> {
  const size = Number(process.env['UV_THREADPOOL_SIZE'] ?? 4);
  const before = threads();
  await Promise.all(Array.from({ length: size }, () => new Promise((resolve, reject) => pbkdf2('x', 'y', 200_000, 32, 'sha256', (e) => (e ? reject(e) : resolve(undefined))))));
  const after = threads();
  const pool = new Set<number>();
  for (const [tid, t] of after) {
    if (tid !== process.pid && t.comm === 'node' && t.seconds - (before.get(tid)?.seconds ?? 0) >= 0.02) pool.add(tid);
  }
  return pool;
}

/** Starts counting; the returned function gives the CPU seconds spent since, by kind of thread. */
export async function cpuSplit(): Promise<() => CpuSplit> {
  const pool = await (poolThreads ??= findLibuvPool());
  const before = threads();
  const usage = process.cpuUsage();
  return () => {
    const after = threads();
    const u = process.cpuUsage(usage);
    const total = (u.user + u.system) / 1e6;
    let main = 0;
    let v8 = 0;
    let inPool = 0;
    for (const [tid, t] of after) {
      const spent = t.seconds - (before.get(tid)?.seconds ?? 0);
      if (tid === process.pid) main += spent;
      else if (pool.has(tid)) inPool += spent;
      else if (t.comm === 'node') v8 += spent;
    }
    return { main, v8, pool: inPool, engine: Math.max(0, total - main - v8 - inPool), total };
  };
}

/** The least time the step's work could take on `cores` cores, with perfect overlap. */
export function boundSeconds(s: CpuSplit, cores: number): number {
  return Math.max(s.main, s.total / cores);
}

/** One line per kind of thread (µs an event and share), and the bound on `cores` cores. */
export function describeSplit(s: CpuSplit, events: number, seconds: number, cores: number): string[] {
  const us = (x: number): string => ((x / events) * 1e6).toFixed(1).padStart(6);
  const pct = (x: number): string => `${((100 * x) / s.total).toFixed(0).padStart(3)} %`;
  const floor = boundSeconds(s, cores);
  return [
    `  main thread (decode, encode, accounting)      ${us(s.main)} µs an event  ${pct(s.main)}`,
    `  V8 helpers (garbage collection, compiler)     ${us(s.v8)} µs an event  ${pct(s.v8)}`,
    `  libuv pool (the engine's queries, file I/O)   ${us(s.pool)} µs an event  ${pct(s.pool)}`,
    `  the engine's own threads                      ${us(s.engine)} µs an event  ${pct(s.engine)}`,
    `  all threads: ${us(s.total).trim()} µs an event over ${seconds.toFixed(2)} s (${(s.total / seconds).toFixed(2)} of the ${cores} cores busy)`,
    `  bound on ${cores} cores, perfect overlap: ${(floor * 1e6 / events).toFixed(1)} µs an event = ${(events / floor).toFixed(0)} events/s`,
  ];
}
