// The worker thread of bench/handoff.ts: reads and decodes the file with the compiled code
// (dist/, `npm run build` first) and posts what it decoded to the main thread (see there).
import { createReadStream } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const { file, mode, dist, messageEvents, batchRows } = workerData;
const { decodeEvent, nowClickHouseTime, DEFAULT_LIMITS } = await import(`${dist}/decode/event.js`);
const { NativeWriter, nativeColumns } = await import(`${dist}/sink/native.js`);
const { TOOL_CALL_COLUMNS } = await import(`${dist}/sink/clickhouse.js`);
const { readLines } = await import(`${dist}/source/file.js`);
const { accountingPart } = await import("./handoff-part.mjs");

const columns = nativeColumns('tool_calls', TOOL_CALL_COLUMNS);
const at = nowClickHouseTime();
let n = 0;
let outcomes = [];
let items = [];
let writer = new NativeWriter(columns, 16 * 1024 * 1024);
for await (const line of readLines(createReadStream(file, { highWaterMark: 1 << 20 }), file)) {
  const o = decodeEvent(line.bytes, line.source, at, DEFAULT_LIMITS);
  n++;
  if (mode === 'a') {
    outcomes.push(o);
    if (outcomes.length === messageEvents) {
      parentPort.postMessage({ kind: 'outcomes', outcomes });
      outcomes = [];
    }
    continue;
  }
  if (o.kind === 'row') {
    writer.row(o.row);
    items.push({ kind: 'row', outputClass: o.outputClass, discovery: o.discovery, call: accountingPart(o.row) });
  } else items.push(o);
  const full = writer.rows >= batchRows;
  if (items.length === messageEvents || full) {
    const block = full ? writer.parts() : undefined;
    // The block's chunks are transferred, not copied (each chunk owns its ArrayBuffer: allocUnsafeSlow).
    parentPort.postMessage({ kind: 'slim', items, block }, block ? [...new Set(block.map((b) => b.buffer))] : []);
    items = [];
    if (full) writer = new NativeWriter(columns, 16 * 1024 * 1024);
  }
}
if (mode === 'a') parentPort.postMessage({ kind: 'outcomes', outcomes });
else {
  const block = writer.rows > 0 ? writer.parts() : undefined;
  parentPort.postMessage({ kind: 'slim', items, block }, block ? [...new Set(block.map((b) => b.buffer))] : []);
}
parentPort.postMessage({ kind: 'done', n });
