// The fuzz suite's shared settings and runner: one seed and one case budget for the whole suite
// (both printed, both overridable), each property bounded in time, and a watchdog thread that
// ends the process when one case runs too long (a synchronous hang cannot be interrupted from
// the thread it blocks), printing the seed and the bytes of the case.
//
//   TOOLCANON_FUZZ_SEED=<int>|random   the seed (default 20261210; `random` draws one and prints it)
//   TOOLCANON_FUZZ_RUNS=<int>          cases across the suite (default 120000), split by share
//   TOOLCANON_FUZZ_CASE_TIMEOUT_MS     one case longer than this is a hang (default 15000)
//   TOOLCANON_FUZZ_SLOW_FACTOR         one case slower than this many times a plain event of its size
//                                      (decoded in the same run) fails the property (default 1000: a run
//                                      here peaks near 90x, GC pauses included; the quadratic
//                                      private-key regex this caught took ~1 500x at 1 MiB)
//   TOOLCANON_FUZZ_TIME_LIMIT_MS       each property stops generating after this (default 60000)
import { writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { decodeEvent, DEFAULT_LIMITS, nowClickHouseTime } from '../../src/decode/event.ts';

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

function seedFromEnv(): number {
  const raw = process.env['TOOLCANON_FUZZ_SEED'];
  if (raw === 'random') return Math.floor(Math.random() * 2 ** 31);
  return intFromEnv('TOOLCANON_FUZZ_SEED', 20261210) | 0;
}

export const FUZZ_SEED = seedFromEnv();
/** Cases across the whole suite (every file takes its share of it). */
export const FUZZ_RUNS = intFromEnv('TOOLCANON_FUZZ_RUNS', 120_000);
export const CASE_TIMEOUT_MS = intFromEnv('TOOLCANON_FUZZ_CASE_TIMEOUT_MS', 15_000);
export const SLOW_FACTOR = intFromEnv('TOOLCANON_FUZZ_SLOW_FACTOR', 1_000);
export const PROPERTY_TIME_LIMIT_MS = intFromEnv('TOOLCANON_FUZZ_TIME_LIMIT_MS', 60_000);

/**
 * Each property's share of FUZZ_RUNS; the shares add up to 1, so the suite runs FUZZ_RUNS cases
 * (plus the end-to-end sample's lines, and the fixed pathological cases).
 */
export const SHARES = {
  'envelope: mutated seed lines': 0.42,
  'envelope: generated events of every type': 0.2,
  'envelope: redaction on': 0.14,
  'envelope: random bytes and JSON': 0.08,
  'importers: mutated files': 0.06,
  'importers: one record alone': 0.1,
} as const;
export type PropertyName = keyof typeof SHARES;

export function runsOf(name: PropertyName): number {
  return Math.max(1, Math.round(FUZZ_RUNS * SHARES[name]));
}

/** A distinct seed per property, derived from the suite's seed, so properties do not share a stream. */
export function seedOf(name: string): number {
  let h = FUZZ_SEED | 0;
  for (let i = 0; i < name.length; i++) h = (Math.imul(h ^ name.charCodeAt(i), 0x01000193) + 0x9e3779b9) | 0;
  return h;
}

export function log(message: string): void {
  // Straight to stderr: vitest prints it even for a passing test, and a killed process keeps it.
  writeSync(2, `[fuzz] ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// The watchdog: the main thread writes, before each case, its start time and bytes into shared
// memory; a worker thread checks every 250 ms and kills the process when a case is overdue.

const MAX_CASE_BYTES = 64 * 1024;
const MAX_LABEL_BYTES = 256;
const shared = new SharedArrayBuffer(32 + MAX_LABEL_BYTES + MAX_CASE_BYTES);
/** [active, case number, case length, label length] */
const state = new Int32Array(shared, 0, 4);
const startedAt = new Float64Array(shared, 16, 1);
const labelBytes = new Uint8Array(shared, 32, MAX_LABEL_BYTES);
const caseBytes = new Uint8Array(shared, 32 + MAX_LABEL_BYTES, MAX_CASE_BYTES);
let watchdog: Worker | undefined;
let currentLabel = '';

const WATCHDOG_SOURCE = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { shared, timeoutMs, seed, reportFile, labelMax } = workerData;
const state = new Int32Array(shared, 0, 4);
const startedAt = new Float64Array(shared, 16, 1);
const labelBytes = new Uint8Array(shared, 32, labelMax);
const caseBytes = new Uint8Array(shared, 32 + labelMax);
setInterval(() => {
  if (Atomics.load(state, 0) !== 1) return;
  const ms = Date.now() - startedAt[0];
  if (ms < timeoutMs) return;
  const len = Atomics.load(state, 2);
  const shown = Buffer.from(caseBytes.subarray(0, Math.min(len, caseBytes.length))).toString('base64');
  const label = Buffer.from(labelBytes.subarray(0, Atomics.load(state, 3))).toString('utf8');
  const message = '[fuzz] HANG: ' + label + ': case ' + Atomics.load(state, 1) + ' has run for ' + ms + ' ms (limit ' + timeoutMs + ' ms, TOOLCANON_FUZZ_CASE_TIMEOUT_MS)' +
    '; reproduce with TOOLCANON_FUZZ_SEED=' + seed + '; the case is ' + len + ' bytes' + (len > caseBytes.length ? ' (the first ' + caseBytes.length + ' shown)' : '') +
    ', base64: ' + shown + '\\n';
  try { fs.writeSync(2, message); } catch {}
  try { fs.writeFileSync(reportFile, message); } catch {}
  process.kill(process.pid, 'SIGKILL');
}, 250);
`;

/** Starts the watchdog once per process. */
function ensureWatchdog(): void {
  if (watchdog) return;
  const reportFile = join(tmpdir(), `toolcanon-fuzz-hang-${process.pid}.txt`);
  watchdog = new Worker(WATCHDOG_SOURCE, { eval: true, workerData: { shared, timeoutMs: CASE_TIMEOUT_MS, seed: FUZZ_SEED, reportFile, labelMax: MAX_LABEL_BYTES } });
  watchdog.unref();
}

/** Marks one case as running (its label and bytes are what a hang report shows). */
function beginCase(label: string, n: number, bytes: Uint8Array): void {
  ensureWatchdog();
  if (label !== currentLabel) {
    const encoded = Buffer.from(label, 'utf8').subarray(0, MAX_LABEL_BYTES);
    labelBytes.set(encoded);
    Atomics.store(state, 3, encoded.byteLength);
    currentLabel = label;
  }
  const len = bytes.byteLength;
  caseBytes.set(len <= MAX_CASE_BYTES ? bytes : bytes.subarray(0, MAX_CASE_BYTES));
  Atomics.store(state, 1, n);
  Atomics.store(state, 2, len);
  startedAt[0] = Date.now();
  Atomics.store(state, 0, 1);
}

function endCase(): void {
  Atomics.store(state, 0, 0);
}

export interface FuzzResult {
  readonly cases: number;
  readonly ms: number;
  readonly slowestMs: number;
  readonly interrupted: boolean;
}

const plainMsBySize = new Map<number, number>();

/**
 * How long this run takes to decode a plain tool call of about `bytes` bytes (at least 256 KiB,
 * rounded up to a power of two, below the event size limit), redaction on: the unit a case's
 * time is measured in, so "slow" is a ratio to a baseline of the same run on the same machine,
 * never a number of milliseconds. Fastest of five, measured once per size.
 */
export function plainDecodeMs(bytes: number): number {
  const size = Math.min(2 ** Math.ceil(Math.log2(Math.max(bytes, 256 * 1024))), DEFAULT_LIMITS.maxEventBytes - 1024);
  const known = plainMsBySize.get(size);
  if (known !== undefined) return known;
  const line = Buffer.from(JSON.stringify({
    schema: 'toolcanon.event/v1', type: 'tool_call', ts: '2026-12-03T10:00:00Z', harness: 'claude_code', session_id: 's', call_id: 'c',
    tool: 'Write', input: { file_path: '/tmp/x', content: 'plain text line\n'.repeat(Math.ceil(size / 16)).slice(0, size) }, status: 'ok', output: 'ok',
  }));
  const at = nowClickHouseTime();
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    decodeEvent(line, 'baseline:1', at, DEFAULT_LIMITS);
    best = Math.min(best, performance.now() - start);
  }
  plainMsBySize.set(size, best);
  return best;
}

/** A case's time as a multiple of a plain event of its size (see plainDecodeMs). */
export function slowness(ms: number, bytes: number): number {
  return ms / plainDecodeMs(bytes);
}

/**
 * Runs a property of one generated case: `bytesOf` gives the bytes a hang report shows, `check`
 * throws (expect) when the case breaks the property. Prints the seed, the cases run and the
 * slowest case; throws fast-check's report (seed, path, shrunk counterexample) on a failure.
 */
export function fuzz<T>(name: string, arbitrary: fc.Arbitrary<T>, runs: number, bytesOf: (value: T) => Uint8Array, check: (value: T) => void): FuzzResult {
  const seed = seedOf(name);
  let n = 0;
  let slowestMs = 0;
  let slowest: T | undefined;
  let worstRatio = 0;
  const t0 = performance.now();
  const details = fc.check(
    fc.property(arbitrary, (value) => {
      n++;
      beginCase(name, n, bytesOf(value));
      const start = performance.now();
      try {
        check(value);
      } finally {
        endCase();
      }
      const ms = performance.now() - start;
      if (ms > slowestMs) {
        slowestMs = ms;
        slowest = value;
      }
      const size = bytesOf(value).byteLength;
      const ratio = slowness(ms, size);
      worstRatio = Math.max(worstRatio, ratio);
      if (ratio > SLOW_FACTOR) throw new Error(`one case (${size} bytes) took ${ratio.toFixed(0)}x a plain event of its size (${ms.toFixed(0)} ms; limit ${SLOW_FACTOR}x, TOOLCANON_FUZZ_SLOW_FACTOR)`);
    }),
    { seed, numRuns: runs, interruptAfterTimeLimit: PROPERTY_TIME_LIMIT_MS, markInterruptAsFailure: false },
  );
  const ms = performance.now() - t0;
  const slowBytes = slowest === undefined ? 0 : bytesOf(slowest).byteLength;
  log(`${name}: seed ${FUZZ_SEED} (property seed ${seed}), ${details.numRuns} cases of ${runs} in ${(ms / 1000).toFixed(1)} s; slowest case ${slowestMs.toFixed(1)} ms (${slowBytes} bytes); worst case ${worstRatio.toFixed(1)}x a plain event of its size`);
  if (details.interrupted) log(`WARNING: ${name} stopped after ${PROPERTY_TIME_LIMIT_MS} ms (TOOLCANON_FUZZ_TIME_LIMIT_MS) with ${details.numRuns} of ${runs} cases`);
  if (details.failed) {
    const report = fc.defaultReportMessage(details) ?? 'property failed';
    const file = join(tmpdir(), `toolcanon-fuzz-failure-${name.replace(/[^A-Za-z0-9]+/g, '-')}-${process.pid}.txt`);
    const counterexample = details.counterexample?.[0];
    writeFileSync(file, `${name}\n${String(details.errorInstance)}\n${report}\n\ncounterexample bytes (base64): ${counterexample === undefined ? '' : Buffer.from(bytesOf(counterexample)).toString('base64')}\n`);
    const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(`${name} failed (TOOLCANON_FUZZ_SEED=${FUZZ_SEED}; counterexample bytes in ${file}):\n${error}\n\n${report}`);
  }
  return { cases: details.numRuns, ms, slowestMs, interrupted: details.interrupted };
}

/** Runs a fixed case under the watchdog and returns how long it took. */
export function timed<T>(name: string, bytes: Uint8Array, run: () => T): { value: T; ms: number } {
  beginCase(name, 0, bytes);
  const start = performance.now();
  try {
    return { value: run(), ms: performance.now() - start };
  } finally {
    endCase();
  }
}
