// The one drive loop (src/source/record.ts) and its sources: a source reads no further while a
// due batch is awaited, positions reach the target as the source gave them, drive flushes at the
// end, and the three sources (file lines, a Kafka batch, an importer's reading through
// readImport) hand their records in order. The targets here are in-memory recorders: what is
// under test is the loop, not a data layer (the database and the broker have their own tests).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { batchRecords, type TopicPosition } from '../../src/kafka/batch-source.ts';
import type { ConsumedRecord } from '../../src/kafka/client.ts';
import { fileLines, listInputFiles } from '../../src/source/file.ts';
import { drive, pump, type RecordSource, type RecordTarget } from '../../src/source/record.ts';

/** A target that logs every call and asks the source to wait after every `every`-th record. */
function recorder<L, P>(every: number, show: (line: L, at: P) => string): { target: RecordTarget<L, P>; log: string[] } {
  const log: string[] = [];
  let n = 0;
  let waiting = false;
  const target: RecordTarget<L, P> = {
    addEvent: (line, at) => {
      // A source that read on while a due() was pending would be caught here.
      if (waiting) throw new Error('read while a due batch was awaited');
      log.push(`event ${show(line, at)}`);
      return ++n % every === 0;
    },
    addMalformed: (raw, detail, at) => {
      log.push(`malformed ${raw.toString()} ${detail} ${String(at)}`);
      return ++n % every === 0;
    },
    due: async () => {
      waiting = true;
      log.push('due');
      await new Promise((resolve) => setTimeout(resolve, 2));
      waiting = false;
    },
    flush: async () => {
      log.push('flush');
    },
  };
  return { target, log };
}

function arraySource<L, P>(records: readonly (readonly [L, P])[]): RecordSource<L, P> {
  return {
    async read(take) {
      for (const [line, at] of records) {
        const wait = take.event(line, at);
        if (wait) await wait;
      }
    },
  };
}

describe('the drive loop', () => {
  it('awaits due() before the source reads on, and drive() flushes once at the end', async () => {
    const { target, log } = recorder<string, string>(2, (l, at) => `${l}@${at}`);
    await drive(
      arraySource([
        ['a', 'f:1'],
        ['b', 'f:2'],
        ['c', 'f:3'],
      ]),
      target,
    );
    expect(log).toEqual(['event a@f:1', 'event b@f:2', 'due', 'event c@f:3', 'flush']);
  });

  it('pump() does not flush', async () => {
    const { target, log } = recorder<string, string>(10, (l) => l);
    await pump(arraySource([['a', 'x']]), target);
    expect(log).toEqual(['event a']);
  });

  it('hands a malformed record to the target with its detail and position, and refuses it when the target takes none', async () => {
    const source: RecordSource<string, string> = {
      async read(take) {
        await take.malformed(Buffer.from('{"x'), 'truncated', 'log.jsonl:7');
      },
    };
    const { target, log } = recorder<string, string>(1, (l) => l);
    await drive(source, target);
    expect(log).toEqual(['malformed {"x truncated log.jsonl:7', 'due', 'flush']);
    const { addMalformed: _, ...withoutMalformed } = recorder<string, string>(1, (l) => l).target;
    await expect(pump(source, withoutMalformed)).rejects.toThrow(/log\.jsonl:7 reached a target that takes none/);
  });

  it('file lines: every non-blank line at file:line, files in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolcanon-drive-'));
    // Removed however the test ends: the tests leave nothing in the temp directory (issue 29).
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'a.jsonl'), '{"n":1}\n\n{"n":2}\n');
    writeFileSync(join(dir, 'b.jsonl'), '{"n":3}');
    let blank = 0;
    let bytes = 0;
    const { target, log } = recorder<Uint8Array, string>(2, (l, at) => `${Buffer.from(l).toString()}@${at.slice(dir.length + 1)}`);
    await drive(
      fileLines(listInputFiles([dir]), (n) => (bytes += n), () => blank++),
      target,
    );
    expect(log).toEqual(['event {"n":1}@a.jsonl:1', 'event {"n":2}@a.jsonl:3', 'due', 'event {"n":3}@b.jsonl:1', 'flush']);
    expect(blank).toBe(1);
    expect(bytes).toBe(17 + 7);
  });

  it('a Kafka batch: each record at topic/partition/offset, until the generation stops', async () => {
    const record = (offset: string, value: string): ConsumedRecord => ({ offset, key: Buffer.from('k'), value: Buffer.from(value), timestamp: '0', headers: {} });
    const batch = { topic: 'tool-events', partition: 3, highWatermark: '13', records: [record('10', 'a'), record('11', 'b'), record('12', 'c')] };
    const show = (r: ConsumedRecord, at: TopicPosition): string => `${r.value?.toString()}@${at.topic}/${at.partition}/${at.offset}`;
    const all = recorder(2, show);
    await pump(
      batchRecords(batch, () => false),
      all.target,
    );
    expect(all.log).toEqual(['event a@tool-events/3/10', 'event b@tool-events/3/11', 'due', 'event c@tool-events/3/12']);
    // A rebalance noticed during the due batch: the source stops before the next record.
    let stopped = false;
    const cut = recorder(2, show);
    const due = cut.target.due;
    cut.target.due = async () => {
      await due();
      stopped = true;
    };
    await pump(
      batchRecords(batch, () => stopped),
      cut.target,
    );
    expect(cut.log).toEqual(['event a@tool-events/3/10', 'event b@tool-events/3/11', 'due']);
  });
});

describe('writerTarget lets a batch being written move on while the source reads on', () => {
  it('a source that never yields still sees the write of the batch before finish (the target pauses every YIELD_EVERY_RECORDS events while it is in flight)', async () => {
    const { MemorySink } = await import('../../src/sink/memory.ts');
    const { BatchWriter, emptyCounts, writerTarget, YIELD_EVERY_RECORDS } = await import('../../src/pipeline/batch-writer.ts');
    const { DEFAULT_LIMITS } = await import('../../src/decode/event.ts');
    const { eventLine } = await import('../helpers/events.ts');
    const sink = new MemorySink();
    // Its tool-call write takes 5 turns of the event loop (as an engine call completes on it).
    const write = sink.writeToolCalls.bind(sink);
    let added = 0;
    const addedWhenWritten: number[] = [];
    sink.writeToolCalls = async (batch) => {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      await write(batch);
      addedWhenWritten.push(added);
    };
    const BATCH = 1000;
    const writer = new BatchWriter(sink, emptyCounts(), { batchMaxRows: BATCH, batchMaxBytes: 1 << 30 });
    const target = writerTarget(writer, '2026-12-02 10:00:00.000', DEFAULT_LIMITS);
    const lines = Array.from({ length: 3 * BATCH }, (_, i) => Buffer.from(eventLine({ call_id: `c${i}`, session_id: `s${i % 7}` })));
    // A source whose reads never wait: it awaits only what the target asks it to.
    const source: RecordSource<Uint8Array, string> = {
      read: async (take) => {
        for (const [i, line] of lines.entries()) {
          added = i + 1;
          const wait = take.event(line, `mem:${i + 1}`);
          if (wait) await wait;
        }
      },
    };
    await drive(source, target);
    expect(writer.counts.eventsRead).toBe(3 * BATCH);
    // The first batch's write ended while the second batch was read, within a few pauses of its
    // start: without the pauses it ends only when the second batch is due (2 * BATCH added).
    expect(addedWhenWritten[0]).toBeLessThan(BATCH + 10 * YIELD_EVERY_RECORDS);
    expect(addedWhenWritten).toHaveLength(3);
  });
});
