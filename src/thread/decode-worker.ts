// The decode thread (src/thread/decode.ts): decodes the lines the main thread sends, encodes
// each message's tool-call rows as one Native block (transferred back, not copied) and sends
// back, in order, what the batch writer keeps of each event. Loads no engine: only the decoder
// and the block encoder.
import { parentPort, workerData } from 'node:worker_threads';
import { toolOutputOf } from '../accounting/session.ts';
import { NativeWriter } from '../sink/native.ts';
import { decodeEvent } from '../decode/event.ts';
import type { DecodedItem, ThreadInput, ThreadOutput, ThreadSetup } from './decode.ts';

const setup = workerData as ThreadSetup;
const port = parentPort;
if (port === null) throw new Error('decode-worker.ts runs as a worker thread (src/thread/decode.ts)');

port.on('message', (input: ThreadInput) => {
  const items: DecodedItem[] = [];
  const writer = new NativeWriter(setup.columns, input.bytes.byteLength);
  let from = 0;
  for (let i = 0; i < input.sources.length; i++) {
    const to = input.ends[i] as number;
    const o = decodeEvent(input.bytes.subarray(from, to), input.sources[i] as string, setup.ingestedAt, setup.limits);
    from = to;
    if (o.kind === 'row') {
      writer.row(o.row);
      items.push({ kind: 'row', call: toolOutputOf(o.row), outputClass: o.outputClass, ingestedAt: o.row.ingested_at, discovery: o.discovery, flags: o.row.flags, redactions: o.row.redactions });
    } else items.push(o);
  }
  const parts = writer.rows > 0 ? writer.parts() : undefined;
  const output: ThreadOutput = { items, block: parts === undefined ? undefined : { parts, rows: writer.rows } };
  // Each chunk of a block owns its memory (Buffer.allocUnsafeSlow): moved to the main thread, not copied.
  port.postMessage(output, parts === undefined ? [] : [...new Set(parts.map((p) => p.buffer as ArrayBuffer))]);
});
