// An incremental import (a transcript imported again and again while it grows, cut anywhere:
// between a tool_use and its tool_result, inside a streamed response, mid-line) gives exactly
// the tables a one-shot import of the whole file gives, token_usage's running context and
// threshold_breaches included: each context is accounted in event-time order whatever order
// its events arrive in (docs/accounting.md, "Order"). On the embedded engine against a one-shot
// import by the command line; a fast-check property over cut points on the memory store; and
// the late tool output of a call answered after a later request, event by event.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ACCOUNTING, type AccountingConfig } from '../../src/accounting/session.ts';
import { DEFAULT_LIMITS, UNKNOWN_MACHINE } from '../../src/decode/event.ts';
import { claudeCodeImporter } from '../../src/importers/claude-code/index.ts';
import { toolCallLine, usageLine } from '../../src/importers/envelope.ts';
import { readImport, runImport, type ImportStateStore } from '../../src/importers/run.ts';
import { BatchWriter, emptyCounts, writerTarget, type BatchLimits } from '../../src/pipeline.ts';
import type { ClickHouseSink, ImportFileState } from '../../src/sink/clickhouse.ts';
import { MemorySink } from '../../src/sink/memory.ts';
import { msToClickHouseTime } from '../../src/util/time.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { makeTempDir, openTempSink } from '../helpers/db.ts';
import { dumpHere, dumpInChild, runCli, type TableDump } from '../helpers/worker.ts';

const CORPUS = corpusOrSkip('claude-code/projects/spotter', 'the incremental accounting test on a corpus transcript (test/importers/incremental-accounting.test.ts)');
const MAIN = CORPUS ? join(CORPUS, '258c7280-ae70-4798-800f-63464d01a85d.jsonl') : '';
const SMALL = join(import.meta.dirname, 'fixtures-claude-code', 'tool-search.jsonl');
/** Low enough that the corpus session crosses it (and falls below again after a compaction). */
const THRESHOLD_PCT = 40;
const ACCOUNTING: AccountingConfig = { ...DEFAULT_ACCOUNTING, thresholdPct: THRESHOLD_PCT };
/** The machine both imports record (the command line's flags, the in-process import's option). */
const MACHINE = { host: 'incremental-host', device_id: 'incremental-device' };

interface Line {
  readonly start: number;
  readonly end: number;
  readonly record: { type?: string; message?: { id?: string; content?: unknown } };
}

function linesOf(data: Buffer): Line[] {
  const out: Line[] = [];
  let start = 0;
  for (let i = data.indexOf(10); i >= 0; i = data.indexOf(10, start)) {
    out.push({ start, end: i + 1, record: JSON.parse(data.subarray(start, i).toString('utf8')) as Line['record'] });
    start = i + 1;
  }
  return out;
}

const hasBlock = (l: Line, type: string): boolean => Array.isArray(l.record.message?.content) && (l.record.message.content as { type?: string }[]).some((b) => b.type === type);

/**
 * Cut points of the kinds that matter, in file order: right after a tool_use line (its result
 * not yet written), right after the first line of a response that goes on (a streamed
 * response's partial usage), mid-line (a torn write), and a few more spread over the file.
 */
function cutsOf(data: Buffer): number[] {
  const lines = linesOf(data);
  const cuts = new Set<number>();
  const afterToolUse = lines.filter((l, i) => l.record.type === 'assistant' && hasBlock(l, 'tool_use') && hasBlock(lines[i + 1] as Line, 'tool_result'));
  const midResponse = lines.filter((l, i) => l.record.type === 'assistant' && l.record.message?.id !== undefined && lines[i + 1]?.record.message?.id === l.record.message.id);
  for (const pick of [afterToolUse, midResponse]) for (const f of [0.2, 0.5, 0.8]) cuts.add((pick[Math.floor(pick.length * f)] as Line).end);
  for (const f of [0.1, 0.35, 0.65, 0.9]) cuts.add(Math.floor(data.length * f) + 13); // mid-line, almost surely
  return [...cuts].filter((c) => c > 0 && c < data.length).sort((a, b) => a - b);
}

describe.skipIf(CORPUS === null)('incremental import of a growing Claude Code transcript = one-shot import (embedded engine)', () => {
  let sink: ClickHouseSink;
  let dir: string;
  let cleanup: () => Promise<void>;
  const tmp = makeTempDir('incremental-accounting');
  beforeAll(async () => {
    ({ sink, dir, cleanup } = await openTempSink('incremental-accounting'));
  });
  afterAll(async () => {
    await cleanup();
    tmp.cleanup();
  });

  it('every analytics table equal, token_usage and threshold_breaches included', async () => {
    const data = readFileSync(MAIN);
    const cuts = cutsOf(data);
    expect(cuts.length).toBeGreaterThanOrEqual(8);
    // The cuts do fall between a tool_use and its result, and inside a line.
    expect(cuts.some((c) => data[c - 1] !== 10)).toBe(true);
    const logs = join(dir, 'logs', 'proj');
    mkdirSync(logs, { recursive: true });
    const file = join(logs, '258c7280-ae70-4798-800f-63464d01a85d.jsonl');
    writeFileSync(file, '');
    let at = 0;
    for (const end of [...cuts, data.length]) {
      appendFileSync(file, data.subarray(at, end));
      at = end;
      const s = await runImport(claudeCodeImporter, [join(dir, 'logs')], sink, { accounting: ACCOUNTING, machine: MACHINE });
      expect(s.counts.deadLetters).toBe(0);
    }
    const incremental = await dumpHere(sink);
    // The one-shot import of the finished file, into a fresh database (a child: one engine per process).
    const oneShotLogs = join(tmp.dir, 'logs', 'proj');
    mkdirSync(oneShotLogs, { recursive: true });
    writeFileSync(join(oneShotLogs, '258c7280-ae70-4798-800f-63464d01a85d.jsonl'), data);
    const db = join(tmp.dir, 'db');
    const r = await runCli(['import', 'claude-code', join(tmp.dir, 'logs'), '--db', db, '--threshold-pct', String(THRESHOLD_PCT), '--host', MACHINE.host, '--device-id', MACHINE.device_id, '--format', 'json'], 300_000);
    expect(r.code).toBe(0);
    const oneShot: TableDump = await dumpInChild(db);
    expect(oneShot.get('token_usage')?.length).toBeGreaterThan(300);
    expect(oneShot.get('threshold_breaches')?.length).toBeGreaterThan(0);
    // The source names the file (the same relative layout, another folder): compared without it.
    const noSource = (d: TableDump): TableDump => new Map([...d].map(([t, rows]) => [t, rows.map((r) => r.replace(/"source":"[^"]*\/proj\//, '"source":"…/proj/')).sort()]));
    const got = noSource(incremental);
    const want = noSource(oneShot);
    for (const [table, rows] of want) {
      const mine = got.get(table) ?? [];
      // The rows of one side only (a short message when they differ), then the whole table.
      expect({ table, onlyIncremental: mine.filter((r) => !rows.includes(r)).slice(0, 3), onlyOneShot: rows.filter((r) => !mine.includes(r)).slice(0, 3) }).toEqual({ table, onlyIncremental: [], onlyOneShot: [] });
      expect(mine).toEqual(rows);
    }
  }, 600_000);
});

/** Import state kept in memory (what import_files records). */
function memoryState(): ImportStateStore {
  const files = new Map<string, ImportFileState>();
  return {
    load: () => Promise.resolve(new Map(files)),
    save: (_importer, read) => {
      for (const [p, f] of read) files.set(p, f);
      return Promise.resolve();
    },
  };
}

/**
 * The accounting tables of the memory store as FINAL reads them, without what the dumps leave
 * out (DUMP_SQL: the ingestion time, and token_usage's origin: a later copy of a usage with the
 * same figures is a duplicate, so the row keeps the line of the copy it was applied from).
 */
function accountingTables(sink: MemorySink): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const t of ['token_usage', 'threshold_breaches'] as const) {
    out[t] = sink
      .final(t)
      .map((r) => {
        const { ingested_at: _at, origin: _origin, ...rest } = r as Record<string, unknown>;
        return JSON.stringify(rest);
      })
      .sort();
  }
  return out;
}

/** Imports `file` into `sink` once per step, the file grown to each cut in turn (each run ingested a second after the last). */
async function importInSteps(sink: MemorySink, dir: string, data: Buffer, cuts: readonly number[], accounting: AccountingConfig, batch?: BatchLimits): Promise<void> {
  const file = join(dir, 'session.jsonl');
  writeFileSync(file, '');
  const state = memoryState();
  let at = 0;
  let run = 0;
  for (const end of [...cuts, data.length]) {
    if (end > at) appendFileSync(file, data.subarray(at, end));
    at = Math.max(at, end);
    const ingestedAt = msToClickHouseTime(Date.UTC(2026, 11, 1) + 1000 * run++);
    const writer = new BatchWriter(sink, emptyCounts(), batch, accounting);
    await readImport(claudeCodeImporter, [dir], state, writerTarget(writer, ingestedAt, { ...DEFAULT_LIMITS, machine: UNKNOWN_MACHINE }), { ingestedAt });
  }
}

describe('incremental import = one-shot import, over cut points (memory store)', () => {
  const tmp = makeTempDir('incremental-accounting-prop');
  afterAll(() => tmp.cleanup());
  const small = corpusOrSkip('claude-code/projects/spotter/tool_heavy.jsonl', 'the cut-point property on tool_heavy.jsonl') ?? SMALL;
  const data = readFileSync(small);
  // Low enough that the session crosses it: the breaches are part of what is compared.
  const accounting: AccountingConfig = { ...DEFAULT_ACCOUNTING, thresholdPct: 10 };
  let oneShot: Record<string, string[]>;
  let runs = 0;
  beforeAll(async () => {
    const sink = new MemorySink();
    mkdirSync(join(tmp.dir, 'one'));
    await importInSteps(sink, join(tmp.dir, 'one'), data, [], accounting);
    oneShot = accountingTables(sink);
    expect(oneShot['token_usage']?.length).toBeGreaterThan(5);
    expect(oneShot['threshold_breaches']?.length).toBeGreaterThan(0);
  });

  it('any cuts, any batch size: the same token_usage and threshold_breaches', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: data.length - 1 }), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(undefined, { batchMaxRows: 3, batchMaxBytes: 1 << 30 }),
        async (cuts, batch) => {
          const sink = new MemorySink();
          const d = join(tmp.dir, `run-${runs++}`);
          mkdirSync(d);
          await importInSteps(sink, d, data, cuts.sort((a, b) => a - b), accounting, batch);
          expect(accountingTables(sink)).toEqual(oneShot);
        },
      ),
      { numRuns: 40 },
    );
  }, 300_000);
});

describe('a tool output that arrives after a later request (the call answered late)', () => {
  const session = 'late-call';
  const ts = (s: number): string => new Date(Date.UTC(2026, 11, 1, 9, 0, s)).toISOString();
  const usage = (id: string, s: number, input: number): string =>
    usageLine({ event_id: id, ts: ts(s), harness: 'claude_code', session_id: session, model: 'claude-opus-4-6', request_id: id, input_tokens: input, output_tokens: 100 });
  const call = (id: string, s: number, output?: string): string =>
    toolCallLine(
      { event_id: id, ts: ts(s), harness: 'claude_code', session_id: session, call_id: id, model: 'claude-opus-4-6', tool: 'Bash', ...(output === undefined ? { status: 'pending' } : { status: 'ok', output }) },
      { json: '{"command":"ls"}' },
    );
  const accounting: AccountingConfig = { ...DEFAULT_ACCOUNTING, thresholdPct: 50 };

  async function replay(sink: MemorySink, batches: readonly (readonly string[])[]): Promise<void> {
    let run = 0;
    for (const lines of batches) {
      const writer = new BatchWriter(sink, emptyCounts(), undefined, accounting);
      const ingestedAt = msToClickHouseTime(Date.UTC(2026, 11, 2) + 1000 * run++);
      // Each event's source names it, so a late copy names the same place as the one-shot's.
      for (const l of lines) writer.add({ bytes: Buffer.from(l), source: `late:${(JSON.parse(l) as { event_id: string }).event_id}` }, ingestedAt, DEFAULT_LIMITS);
      await writer.flush();
    }
  }

  it('is accounted where its time puts it: the rows after it re-derived, a breach it causes moved', async () => {
    // u1 (90 000 of 200 000), the call at 09:00:02 with 40 000 tokens of output (crosses 50 %),
    // u2 at 09:00:03 (the observed 95 000: below again), u3 (120 000: crosses again).
    const big = 'x'.repeat(160_000);
    const whole = [usage('u1', 1, 89_900), call('c1', 2, big), usage('u2', 3, 94_900), usage('u3', 4, 119_900)];
    const oneShot = new MemorySink();
    await replay(oneShot, [whole]);
    const late = new MemorySink();
    await replay(late, [[usage('u1', 1, 89_900), call('c1', 2), usage('u2', 3, 94_900)], [call('c1', 2, big), usage('u3', 4, 119_900)]]);
    const want = accountingTables(oneShot);
    expect(want['threshold_breaches']).toHaveLength(2);
    expect(accountingTables(late)).toEqual(want);
    // Events one per batch, in reverse time order: still the same tables.
    const reversed = new MemorySink();
    await replay(reversed, [...whole].reverse().map((l) => [l]));
    expect(accountingTables(reversed)).toEqual(want);
  });
});
