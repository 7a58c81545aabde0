// What decoding in a worker thread would save the main thread (issue 11's "decode in a worker
// thread while the main thread feeds the engine"). A replay's main thread decodes every event,
// encodes the tool-call rows and runs the accounting; the engine inserts on its own threads.
// Moving the decoding to a worker thread only helps by what the main thread no longer does: the
// decoded events still have to reach it, and a message between threads is copied (structured
// clone) and read again on the receiving side.
//
// Measured on the same file in the same run, main-thread time per event (busy time of its event
// loop, which includes reading each message):
//   in thread:  read + split + decode + encode the tool-call rows (what a replay's main thread does up to the accounting)
//   handed over (a): a worker reads, decodes and posts the outcomes, in messages of 1,000; the
//                    main thread receives them and encodes the tool-call rows
//   handed over (b): the worker also encodes the tool-call rows and transfers the Native
//                    block's bytes (no copy); the main thread receives what the accounting
//                    needs (the small fields of each row, usage, MCP events, dead letters)
// The compiled code is measured on both sides, as the bin runs it (`npm run build` first); the
// worker is bench/handoff-worker.mjs.
// Usage: npx tsx bench/handoff.ts [N=100000]
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DecodeOutcome } from '../src/decode/event.ts';
import type { ToolCallRow } from '../src/model/records.ts';
import { multipliedEvents, ROOT } from './fixtures.ts';

const DIST = join(ROOT, 'dist');
const { decodeEvent, nowClickHouseTime, DEFAULT_LIMITS } = (await import(join(DIST, 'decode/event.js'))) as typeof import('../src/decode/event.ts');
const { NativeWriter, nativeColumns } = (await import(join(DIST, 'sink/native.js'))) as typeof import('../src/sink/native.ts');
const { TOOL_CALL_COLUMNS } = (await import(join(DIST, 'sink/clickhouse.js'))) as typeof import('../src/sink/clickhouse.ts');
const { readLines } = (await import(join(DIST, 'source/file.js'))) as typeof import('../src/source/file.ts');
const { accountingPart } = (await import(join(ROOT, 'bench/handoff-part.mjs'))) as { accountingPart: (r: ToolCallRow) => object };

/** Events per message from the worker. */
const MESSAGE_EVENTS = 1000;
/** Tool-call rows per Native block (the pipeline's batch). */
const BATCH_ROWS = 20_000;
const COLUMNS = nativeColumns('tool_calls', TOOL_CALL_COLUMNS);

type Message =
  | { readonly kind: 'outcomes'; readonly outcomes: DecodeOutcome[] }
  | { readonly kind: 'slim'; readonly items: object[]; readonly block: Buffer[] | undefined }
  | { readonly kind: 'done'; readonly n: number };

interface Run {
  readonly label: string;
  readonly wallMs: number;
  readonly mainBusyMs: number;
  readonly events: number;
}

/** Read, decode and encode in this thread: what a replay's main thread does before the accounting. */
async function inThread(file: string): Promise<Run> {
  const at = nowClickHouseTime();
  const t = performance.now();
  let n = 0;
  let writer = new NativeWriter(COLUMNS, 16 * 1024 * 1024);
  const kept: object[] = [];
  for await (const line of readLines(createReadStream(file, { highWaterMark: 1 << 20 }), file)) {
    const o = decodeEvent(line.bytes, line.source, at, DEFAULT_LIMITS);
    n++;
    if (o.kind === 'row') {
      writer.row(o.row);
      kept.push(accountingPart(o.row));
    } else kept.push(o);
    if (writer.rows >= BATCH_ROWS) {
      writer.parts();
      writer = new NativeWriter(COLUMNS, 16 * 1024 * 1024);
      kept.length = 0;
    }
  }
  writer.parts();
  const wallMs = performance.now() - t;
  return { label: 'in thread: read + decode + encode', wallMs, mainBusyMs: wallMs, events: n };
}

/** A worker decodes; this thread receives (and in mode a encodes the rows). Busy time is the event loop's. */
function handedOver(file: string, mode: 'a' | 'b'): Promise<Run> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(join(ROOT, 'bench/handoff-worker.mjs'), { workerData: { file, mode, dist: DIST, messageEvents: MESSAGE_EVENTS, batchRows: BATCH_ROWS } });
    let started = 0;
    let elu = performance.eventLoopUtilization();
    let writer = new NativeWriter(COLUMNS, 16 * 1024 * 1024);
    let received = 0;
    let blocks = 0;
    worker.once('online', () => {
      started = performance.now();
      elu = performance.eventLoopUtilization();
    });
    worker.on('message', (m: Message) => {
      if (m.kind === 'outcomes') {
        for (const o of m.outcomes) {
          received++;
          if (o.kind === 'row') writer.row(o.row);
          if (writer.rows >= BATCH_ROWS) {
            writer.parts();
            writer = new NativeWriter(COLUMNS, 16 * 1024 * 1024);
          }
        }
      } else if (m.kind === 'slim') {
        received += m.items.length;
        if (m.block) blocks++;
      } else {
        const wallMs = performance.now() - started;
        const busy = performance.eventLoopUtilization(elu);
        void worker.terminate();
        if (m.n !== received) reject(new Error(`received ${received} of ${m.n} events`));
        else if (mode === 'b' && blocks === 0) reject(new Error('no block transferred'));
        else resolve({ label: mode === 'a' ? 'handed over (a): outcomes posted, rows encoded here' : 'handed over (b): rows encoded there, block transferred', wallMs, mainBusyMs: busy.active, events: m.n });
      }
    });
    worker.once('error', reject);
  });
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 100_000);
  const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-handoff-'));
  try {
    const file = join(tmp, 'events.jsonl');
    writeFileSync(file, `${multipliedEvents(n).join('\n')}\n`);
    // Each way twice, alternating; the faster of the two kept (the first also pays for the JIT).
    const runs: Run[][] = [[], [], []];
    for (let i = 0; i < 2; i++) {
      runs[0]!.push(await inThread(file));
      runs[1]!.push(await handedOver(file, 'a'));
      runs[2]!.push(await handedOver(file, 'b'));
    }
    const best = runs.map((rs) => rs.reduce((a, b) => (a.mainBusyMs <= b.mainBusyMs ? a : b)));
    const base = best[0]!;
    for (const r of best) if (r.events !== n) throw new Error(`${r.label}: ${r.events} of ${n} events`);
    console.log(`events: ${n} (fixture events multiplied)`);
    console.log('way                                                       main-thread µs/event  wall µs/event  main-thread time / in thread');
    for (const r of best) {
      console.log(`${r.label.padEnd(57)} ${((r.mainBusyMs * 1000) / n).toFixed(2).padStart(20)}  ${((r.wallMs * 1000) / n).toFixed(2).padStart(13)}  ${(r.mainBusyMs / base.mainBusyMs).toFixed(3).padStart(28)}`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
