// discovery_events derived batch by batch from each context's state and the batch's turns
// (src/derive/discovery.ts, issue 31 step 2) equals the derivation over all observations
// (deriveDiscoveryPerContext), whatever the batching and arrival order: late searches that list a
// tool before stored calls, refusals recovered in a later batch, copies (pending then finished,
// two finished, one sent again), and rows stored before contexts kept a state. On the memory
// store for many orders, then end to end on the embedded engine through replay.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { discoveryDerivation } from '../../src/derive/discovery.ts';
import { deriveDiscoveryPerContext } from '../../src/discovery/discovery.ts';
import type { DiscoveryEventRow, DiscoveryObservation } from '../../src/model/mcp.ts';
import { replayPaths } from '../../src/pipeline/batch-writer.ts';
import { MemorySink } from '../../src/sink/memory.ts';
import { cut } from '../helpers/batches.ts';
import { makeTempDir, openTempSink } from '../helpers/db.ts';

const TOOLS = ['srv__x', 'srv__y', 'other__z'];

interface Spec {
  readonly session: number;
  readonly turn: number;
  readonly ms: number;
  readonly kind: 'search' | 'refusal' | 'call';
  readonly tools: readonly number[];
  readonly query: number;
  readonly ok: boolean;
  /** 0: one copy; 1: a pending copy too; 2: a second finished copy listing more, ingested later. */
  readonly copies: 0 | 1 | 2;
}

const spec = fc.record({
  session: fc.integer({ min: 0, max: 1 }),
  turn: fc.integer({ min: 0, max: 3 }),
  ms: fc.integer({ min: 0, max: 400 }),
  kind: fc.constantFrom('search', 'search', 'refusal', 'call', 'call'),
  tools: fc.subarray([0, 1, 2]),
  query: fc.integer({ min: 0, max: 2 }),
  ok: fc.boolean(),
  copies: fc.constantFrom(0, 0, 0, 1, 2),
}) as fc.Arbitrary<Spec>;

const time = (ms: number): string => new Date(Date.parse('2026-12-10T14:00:00Z') + ms).toISOString().replace('T', ' ').replace('Z', '');

/** The copies of one call's observation, in the order they are sent. */
function observations(s: Spec, i: number): DiscoveryObservation[] {
  const tool = TOOLS[s.tools[0] ?? 0] as string;
  const base: DiscoveryObservation = {
    event_id: `e${String(i).padStart(4, '0')}`,
    ts: time(s.turn * 1_000 + s.ms),
    harness: 'grok_build',
    session_id: `s${s.session}`,
    agent_id: '',
    host: '',
    device_id: '',
    turn_id: `t${s.turn}`,
    model: 'grok-4',
    tool_name: s.kind === 'search' ? 'tool_search' : tool,
    status: s.ok ? 'ok' : 'error',
    source: 'test',
    ingested_at: time(10_000 + i),
    query: s.kind === 'search' ? ['a', 'b', ''][s.query] as string : '',
    result_tools: s.kind === 'search' ? s.tools.map((t) => TOOLS[t] as string) : [],
    reported_budget_exhausted: false,
    refused_tool: s.kind === 'refusal' ? tool.split('__')[1] as string : '',
    recovery_query: s.kind === 'refusal' ? ['a', 'b', ''][s.query] as string : '',
    called_tool: s.kind === 'call' ? tool : '',
    discovery_kind: s.kind,
  };
  if (s.copies === 1) return [{ ...base, status: 'pending', result_tools: [], ingested_at: time(9_000 + i) }, base];
  if (s.copies === 2) return [base, { ...base, result_tools: s.kind === 'search' ? [...new Set([...base.result_tools, 'srv__y'])] : [], query: `${base.query}!`, ingested_at: time(20_000 + i) }];
  return [base];
}

const WHEN = (r: DiscoveryEventRow): string => {
  const { computed_at: _c, ...rest } = r;
  const fields: [string, unknown][] = Object.entries(rest).map(([k, v]) => [k, typeof v === 'boolean' ? (v ? 1 : 0) : typeof v === 'number' ? String(v) : v]);
  return JSON.stringify(Object.fromEntries(fields.sort((x, y) => (x[0] < y[0] ? -1 : 1))));
};

async function run(store: MemorySink, batches: readonly (readonly DiscoveryObservation[])[]): Promise<void> {
  for (const [i, b] of batches.entries()) await discoveryDerivation.run(store, b, time(100_000 + i));
}

const stored = (store: MemorySink): string[] => (store.final('discovery_events') as unknown as DiscoveryEventRow[]).map(WHEN).sort();

describe('discovery_events from the context state and the batch\'s turns = the derivation over every observation', () => {
  it('in event-time order, in any batching', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { minLength: 1, maxLength: 60 }), fc.array(fc.nat(), { maxLength: 8 }), async (specs, points) => {
        const all = specs.flatMap(observations).sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.event_id < b.event_id ? -1 : 1));
        const store = new MemorySink();
        await run(store, cut(all, points));
        expect(stored(store)).toEqual(deriveDiscoveryPerContext(all, 'x').map(WHEN).sort());
      }),
      { numRuns: 200 },
    );
  });

  it('in any arrival order (late searches, refusals recovered later), with copies and repeats, in any batching', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { minLength: 1, maxLength: 60 }), fc.array(fc.nat(), { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), async (specs, points, again) => {
        const all = specs.flatMap(observations);
        const sent = [...all, ...again.map((i) => all[i % all.length] as DiscoveryObservation)];
        const store = new MemorySink();
        await run(store, cut(sent, points));
        expect(stored(store)).toEqual(deriveDiscoveryPerContext(sent, 'x').map(WHEN).sort());
      }),
      { numRuns: 200 },
    );
  });

  it('a search listing a tool before stored calls of it turns their after_search true, reading only those calls', async () => {
    const store = new MemorySink();
    const calls = Array.from({ length: 20 }, (_, i) => observations({ session: 0, turn: 1, ms: 10 + i, kind: 'call', tools: [0], query: 0, ok: true, copies: 0 }, i)).flat();
    await run(store, [calls]);
    expect((store.final('discovery_events') as unknown as DiscoveryEventRow[]).filter((r) => r.after_search)).toEqual([]);
    let wholeReads = 0;
    const loadAll = store.loadDiscoveryObservations.bind(store);
    store.loadDiscoveryObservations = async (c) => {
      wholeReads++;
      return loadAll(c);
    };
    const late = observations({ session: 0, turn: 0, ms: 5, kind: 'search', tools: [0], query: 0, ok: true, copies: 0 }, 100);
    await run(store, [late]);
    expect(wholeReads).toBe(0);
    expect((store.final('discovery_events') as unknown as DiscoveryEventRow[]).filter((r) => r.after_search)).toHaveLength(20);
    expect(stored(store)).toEqual(deriveDiscoveryPerContext([...calls, ...late], 'x').map(WHEN).sort());
  });

  it('rows stored without a context state (before migration 14) are derived once from all rows, then from the state', async () => {
    const all = Array.from({ length: 30 }, (_, i) => observations({ session: 0, turn: i % 3, ms: i, kind: i % 4 === 0 ? 'search' : 'call', tools: [i % 3, (i + 1) % 3], query: 0, ok: true, copies: 0 }, i)).flat();
    const store = new MemorySink();
    await store.writeDiscoveryEvents(deriveDiscoveryPerContext(all.slice(0, 20), time(0)));
    let wholeReads = 0;
    const loadAll = store.loadDiscoveryObservations.bind(store);
    store.loadDiscoveryObservations = async (c) => {
      wholeReads++;
      return loadAll(c);
    };
    await run(store, [all.slice(20, 25), all.slice(25)]);
    expect(wholeReads).toBe(1);
    expect(stored(store)).toEqual(deriveDiscoveryPerContext(all, 'x').map(WHEN).sort());
  });
});

describe('discovery_events on the embedded engine, replayed in small batches', () => {
  const tmp = makeTempDir('derive-discovery');
  afterAll(() => tmp.cleanup());

  it('equals one replay in a single batch, and a second replay writes no row', async () => {
    const specs = fc.sample(fc.array(spec, { minLength: 120, maxLength: 120 }), { numRuns: 1, seed: 14 })[0] as Spec[];
    // Tool calls as envelope lines, out of event-time order: the decoder observes them.
    const lines = specs.map((s, i) => {
      const o = observations({ ...s, copies: 0 }, i)[0] as DiscoveryObservation;
      const head = { schema: 'toolcanon.event/v1', type: 'tool_call', ts: `${o.ts.replace(' ', 'T')}Z`, harness: 'grok_build_concise', session_id: o.session_id, turn_id: o.turn_id, call_id: o.event_id, model: 'grok-4' };
      if (s.kind === 'search') return JSON.stringify({ ...head, tool: 'search_tool', input: { query: o.query }, status: 'ok', output: JSON.stringify({ results: o.result_tools.map((t) => ({ server: t.split('__')[0], tools: [{ name: t.split('__')[1] }] })) }) });
      const target = TOOLS[s.tools[0] ?? 0] as string;
      if (s.kind === 'refusal') return JSON.stringify({ ...head, tool: 'use_tool', input: { tool_name: target, tool_input: {} }, status: 'error', error: `Tool '${o.refused_tool}' not in active set. Call searchTools(query='${o.recovery_query}') to discover it` });
      return JSON.stringify({ ...head, tool: 'use_tool', input: { tool_name: target, tool_input: {} }, status: s.ok ? 'ok' : 'error', output: 'done' });
    });
    const file = join(tmp.dir, 'calls.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    // The reference: one batch into the memory store (test/sink/memory.test.ts holds it equal to the engine).
    const one = new MemorySink();
    await replayPaths([file], one);
    const small = await openTempSink('derive-discovery-small');
    const norm = (r: DiscoveryEventRow): string => WHEN({ ...r, ingested_at: '' });
    try {
      const counts = await replayPaths([file], small.sink, { batch: { batchMaxRows: 7, batchMaxBytes: 1 << 30 } });
      expect(counts.discoveryEvents).toBeGreaterThan(60);
      const want = (one.final('discovery_events') as unknown as DiscoveryEventRow[]).map(norm).sort();
      expect((await small.sink.queryRows<DiscoveryEventRow>('SELECT * FROM discovery_events FINAL')).map(norm).sort()).toEqual(want);
      expect(want.filter((r) => r.includes('"after_search":1')).length).toBeGreaterThan(0);
      const plain = async (): Promise<number> => Number((await small.sink.queryRows<{ n: string }>('SELECT count() AS n FROM discovery_events'))[0]?.n);
      const before = await plain();
      await replayPaths([file], small.sink, { batch: { batchMaxRows: 7, batchMaxBytes: 1 << 30 } });
      expect(await plain()).toBe(before);
    } finally {
      await small.cleanup();
    }
  }, 120_000);
});
