// Regression tests for "accounting counts a redelivered or replayed event twice": at-least-once
// delivery and overlapping replays must apply each event to the token accounting exactly once,
// in one run, across runs, and for a re-serialised copy of the same events; evicting idle
// contexts and rebuilding them from storage changes nothing.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ACCOUNTING } from '../../src/accounting/session.ts';
import { replayPaths, type PipelineCounts } from '../../src/pipeline/batch-writer.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { openTempSink } from '../helpers/db.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const GROK = join(ROOT, 'fixtures/grok_build/calls.jsonl');
/** Two breaches (SPEC §5 compaction session): what a double count would cross again. */
const COMPACTION = join(ROOT, 'fixtures/sessions/compaction.jsonl');
const INPUT = [GROK, COMPACTION];
const FIXTURES = join(ROOT, 'fixtures');

interface Figures {
  rows: number;
  /** The Grok Build fixture's sessions alone (the reproduction). */
  grok_sum: string;
  grok_max: string;
  context_sum: string;
  context_max: string;
  breaches: number;
  breach_ids: string[];
}

async function figures(sink: ClickHouseSink): Promise<Figures> {
  const [u] = await sink.queryRows<{ rows: string; context_sum: string; context_max: string; grok_sum: string; grok_max: string }>(
    `SELECT count() AS rows, toString(sum(context_tokens)) AS context_sum, toString(max(context_tokens)) AS context_max,
       toString(sumIf(context_tokens, session_id != 'sess-compaction')) AS grok_sum, toString(maxIf(context_tokens, session_id != 'sess-compaction')) AS grok_max
     FROM token_usage FINAL`,
  );
  const b = await sink.queryRows<{ breach_id: string }>('SELECT breach_id FROM threshold_breaches FINAL ORDER BY breach_id');
  return { rows: Number(u?.rows), grok_sum: u?.grok_sum ?? '', grok_max: u?.grok_max ?? '', context_sum: u?.context_sum ?? '', context_max: u?.context_max ?? '', breaches: b.length, breach_ids: b.map((r) => r.breach_id) };
}

/** The same events in another serialisation: keys in reverse order, spaces after separators. */
function reserialise(path: string, out: string): void {
  const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l !== '');
  const reversed = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(reversed) : typeof v === 'object' && v !== null ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversed(x)])) : v;
  writeFileSync(out, `${lines.map((l) => JSON.stringify(reversed(JSON.parse(l)), null, 1).replaceAll('\n', ' ')).join('\n')}\n`);
}

describe('each event is applied to the accounting once', () => {
  let sink: ClickHouseSink;
  let dir: string;
  let cleanup: () => Promise<void>;
  let once: Figures;
  let onceCounts: PipelineCounts;

  const reset = async (): Promise<void> => {
    for (const t of ['tool_calls', 'token_usage', 'threshold_breaches', 'dead_letters', 'mcp_events', 'mcp_server_state', 'mcp_tool_registrations', 'discovery_events']) {
      await sink.client.command({ query: `TRUNCATE TABLE ${t}` });
    }
  };

  beforeAll(async () => {
    ({ sink, dir, cleanup } = await openTempSink('dups'));
    onceCounts = await replayPaths(INPUT, sink);
    once = await figures(sink);
  }, 120_000);
  afterAll(async () => cleanup?.());

  it('one replay gives the reference figures (Grok Build: 11,653 summed, 1,148 at most; two breaches)', () => {
    expect(once).toMatchObject({ grok_sum: '11653', grok_max: '1148', breaches: 2 });
    expect(onceCounts.breaches).toBe(2);
    expect(onceCounts.duplicatesSkipped).toBe(0);
  });

  it('the same file twice in one run: the same rows, sums, maxima and breaches; the summary says so', async () => {
    await reset();
    const twice = await replayPaths([...INPUT, ...INPUT], sink);
    expect(await figures(sink)).toEqual(once);
    expect(twice.breaches).toBe(2);
    expect(twice.estimateRows).toBe(onceCounts.estimateRows);
    expect(twice.duplicatesSkipped).toBe(onceCounts.estimateRows + onceCounts.usageRows);
    expect(twice.rowsWritten + twice.deadLetters).toBe(twice.eventsRead);
  });

  it('the same file in two runs (a restarted process): the second run applies nothing', async () => {
    await reset();
    await replayPaths(INPUT, sink);
    const second = await replayPaths(INPUT, sink);
    expect(await figures(sink)).toEqual(once);
    expect(second.breaches).toBe(0);
    expect(second.estimateRows).toBe(0);
    expect(second.duplicatesSkipped).toBe(onceCounts.estimateRows + onceCounts.usageRows);
  });

  it('a re-serialised copy (other key order and spacing) has the same ids: nothing is added', async () => {
    // Each test starts from its own tables (they pass in any order: vitest --sequence.shuffle.tests).
    await reset();
    await replayPaths(INPUT, sink);
    const copies = INPUT.map((f, i) => {
      const copy = join(dir, `reserialised-${i}.jsonl`);
      reserialise(f, copy);
      return copy;
    });
    const again = await replayPaths(copies, sink);
    expect(again.deadLetters).toBe(0);
    expect(again.duplicatesSkipped).toBe(onceCounts.estimateRows + onceCounts.usageRows);
    expect(await figures(sink)).toEqual(once);
    const [calls] = await sink.queryRows<{ n: string }>('SELECT count() AS n FROM tool_calls FINAL');
    expect(Number(calls?.n)).toBe(onceCounts.toolCallRows);
  });

  it('a run that overlaps an earlier one continues from where it stopped', async () => {
    await reset();
    const lines = INPUT.flatMap((f) => readFileSync(f, 'utf8').split('\n').filter((l) => l !== ''));
    const head = join(dir, 'head.jsonl');
    const tail = join(dir, 'tail.jsonl');
    writeFileSync(head, `${lines.slice(0, 30).join('\n')}\n`);
    writeFileSync(tail, `${lines.slice(12).join('\n')}\n`); // 18 events seen before, the rest new
    await replayPaths([head], sink, { batch: { batchMaxRows: 4, batchMaxBytes: 1 << 30 } });
    await replayPaths([tail], sink, { batch: { batchMaxRows: 4, batchMaxBytes: 1 << 30 } });
    expect(await figures(sink)).toEqual(once);
  });

  it('evicting idle contexts (one kept in memory) and rebuilding them from storage changes no row', async () => {
    await reset();
    const dump = 'SELECT * EXCEPT (origin, ingested_at) FROM token_usage FINAL ORDER BY session_id, agent_id, session_seq, event_id';
    await replayPaths([FIXTURES], sink);
    const kept = await sink.queryRows(dump);
    await reset();
    const evicting = await replayPaths([FIXTURES], sink, { batch: { batchMaxRows: 5, batchMaxBytes: 1 << 30 }, accounting: { ...DEFAULT_ACCOUNTING, maxContexts: 1 } });
    expect(evicting.contextsEvicted).toBeGreaterThan(20);
    expect(await sink.queryRows(dump)).toEqual(kept);
    expect(kept.length).toBeGreaterThan(200);
  }, 120_000);
});
