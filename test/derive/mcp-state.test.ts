// mcp_server_state derived batch by batch from the last stored state (src/derive/mcp-state.ts,
// issue 31 step 2) equals the pure derivation over all of a server's events
// (deriveServerStates), whatever the batching and the arrival order: in order, late (an event
// before the last stored), repeated (events stored already), and from rows stored before rows
// carried their state. On the memory store for many orders, then end to end on the embedded engine.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeEvent } from '../../src/decode/event.ts';
import { mcpStateDerivation } from '../../src/derive/mcp-state.ts';
import { deriveServerStatesPerServer } from '../../src/mcp/lifecycle.ts';
import type { McpEventRow, McpServerStateRow } from '../../src/model/mcp.ts';
import { replayPaths } from '../../src/pipeline/batch-writer.ts';
import { MemorySink } from '../../src/sink/memory.ts';
import { cut } from '../helpers/batches.ts';
import { makeTempDir, openTempSink } from '../helpers/db.ts';

const T0 = Date.parse('2026-12-10T14:00:00.000Z');
const STATES = ['connecting', 'connected', 'disconnected', 'failed', 'restarting', 'disabled', 'removed'] as const;

interface Spec {
  readonly server: number;
  readonly ms: number;
  readonly kind: 'status' | 'tools' | 'changed';
  readonly state: number;
  readonly client: number;
}

const spec = fc.record({
  server: fc.integer({ min: 0, max: 1 }),
  // Many events share a 50 ms window, some share a millisecond.
  ms: fc.integer({ min: 0, max: 2_000 }),
  kind: fc.constantFrom('status', 'status', 'status', 'tools', 'changed'),
  state: fc.integer({ min: 0, max: STATES.length - 1 }),
  client: fc.integer({ min: 1, max: 2 }),
}) as fc.Arbitrary<Spec>;

function line(s: Spec, i: number): string {
  const base = { schema: 'toolcanon.event/v1', harness: 'grok_build', session_id: 's-1', event_id: `e${String(i).padStart(5, '0')}`, ts: new Date(T0 + s.ms).toISOString(), server: `srv${s.server}`, client_id: `c${s.client}` };
  if (s.kind === 'tools') return JSON.stringify({ ...base, type: 'mcp_tools', mcp_initialized: i % 2 === 0, tools: [{ name: `srv${s.server}__t${i % 3}`, model_visible: true, disabled: false }] });
  if (s.kind === 'changed') return JSON.stringify({ ...base, type: 'mcp_tools_changed' });
  return JSON.stringify({ ...base, type: 'mcp_status', transport: 'stdio', state: STATES[s.state] });
}

function decode(lines: readonly string[]): McpEventRow[] {
  return lines.map((l) => {
    const o = decodeEvent(Buffer.from(l), 'test', '2026-12-10 15:00:00.000');
    if (o.kind !== 'mcp') throw new Error(`not an MCP event: ${l}`);
    return o.event;
  });
}

const WHEN = (r: McpServerStateRow): string => {
  const { computed_at: _c, ...rest } = r;
  const fields: [string, unknown][] = Object.entries(rest).map(([k, v]) => [k, typeof v === 'number' ? String(v) : v]);
  return JSON.stringify(Object.fromEntries(fields.sort((x, y) => (x[0] < y[0] ? -1 : 1))));
};
const expected = (events: readonly McpEventRow[]): string[] => [...deriveServerStatesPerServer(events, 'x').values()].flat().map(WHEN).sort();

/** Runs the derivation over the batches as the batch writer does (it stores the events not stored yet, after their states). */
async function run(store: MemorySink, batches: readonly (readonly McpEventRow[])[]): Promise<number> {
  let added = 0;
  for (const [i, b] of batches.entries()) added += (await mcpStateDerivation.run(store, b, `2026-12-10 15:00:${String(i % 60).padStart(2, '0')}.000`)).mcpServerStateRows ?? 0;
  return added;
}

describe('mcp_server_state from the last stored state = the derivation over every event', () => {
  it('in event-time order, in any batching, with a count of the rows added', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { minLength: 1, maxLength: 80 }), fc.array(fc.nat(), { maxLength: 8 }), async (specs, points) => {
        const events = decode(specs.map(line)).sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.event_id < b.event_id ? -1 : 1));
        const store = new MemorySink();
        const added = await run(store, cut(events, points));
        const got = (store.final('mcp_server_state') as unknown as McpServerStateRow[]).map(WHEN).sort();
        expect(got).toEqual(expected(events));
        expect(added).toBe(got.length);
      }),
      { numRuns: 150 },
    );
  });

  it('in any arrival order (late events), with events sent again, in any batching', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { minLength: 1, maxLength: 60 }), fc.array(fc.nat(), { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 10 }), async (specs, points, again) => {
        const events = decode(specs.map(line));
        // Some events are sent a second time, later.
        const repeated = [...events, ...again.map((i) => events[i % events.length] as McpEventRow)];
        const store = new MemorySink();
        const added = await run(store, cut(repeated, points));
        const got = (store.final('mcp_server_state') as unknown as McpServerStateRow[]).map(WHEN).sort();
        expect(got).toEqual(expected(events));
        expect(added).toBe(got.length);
      }),
      { numRuns: 150 },
    );
  });

  it('a late event reads the stored events from its window on, not the server\'s history before it', async () => {
    const specs: Spec[] = Array.from({ length: 400 }, (_, i) => ({ server: 0, ms: i * 100, kind: 'status', state: i % 2 === 0 ? 1 : 2, client: 1 }));
    const events = decode(specs.map(line));
    const store = new MemorySink();
    await run(store, [events]);
    const read: number[] = [];
    const loadMcpEvents = store.loadMcpEvents.bind(store);
    store.loadMcpEvents = async (servers) => {
      const rows = await loadMcpEvents(servers);
      read.push(rows.length);
      return rows;
    };
    // In order: no event is read back at all.
    const next = decode([line({ server: 0, ms: 400 * 100, kind: 'status', state: 1, client: 1 }, 900)]);
    await run(store, [next]);
    expect(read).toEqual([]);
    // Late, 10 events before the end: the 11 stored from its window on (10 and the one above).
    const late = decode([line({ server: 0, ms: 390 * 100 + 20, kind: 'status', state: 3, client: 1 }, 901)]);
    await run(store, [late]);
    expect(read).toEqual([11]);
    const all = [...events, ...next, ...late];
    expect((store.final('mcp_server_state') as unknown as McpServerStateRow[]).map(WHEN).sort()).toEqual(expected(all));
  });

  it('rows stored before rows carried their state are derived again from the events, once', async () => {
    const events = decode(Array.from({ length: 30 }, (_, i) => line({ server: 0, ms: i * 70, kind: 'status', state: i % 3, client: 1 }, i)));
    const store = new MemorySink();
    await run(store, [events.slice(0, 20)]);
    // As migrations 13 and 14 leave them: every stored row without its carry, no heads kept.
    for (const r of store.rows('mcp_server_state')) r['carry'] = '';
    (store as unknown as { states: Map<string, string> }).states.clear();
    let wholeReads = 0;
    const loadMcpEvents = store.loadMcpEvents.bind(store);
    store.loadMcpEvents = async (servers) => {
      if (servers.every((s) => s.since === undefined)) wholeReads++;
      return loadMcpEvents(servers);
    };
    await run(store, [events.slice(20, 25), events.slice(25)]);
    expect(wholeReads).toBe(1);
    expect((store.final('mcp_server_state') as unknown as McpServerStateRow[]).map(WHEN).sort()).toEqual(expected(events));
  });
});

describe('mcp_server_state on the embedded engine, replayed in batches in any order', () => {
  const tmp = makeTempDir('derive-mcp-state');
  afterAll(() => tmp.cleanup());

  it('equals the derivation over every event, and a second replay adds no row', async () => {
    const specs = fc.sample(fc.array(spec, { minLength: 150, maxLength: 150 }), { numRuns: 1, seed: 31 })[0] as Spec[];
    const lines = specs.map(line);
    const file = join(tmp.dir, 'events.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { sink, cleanup } = await openTempSink('derive-mcp-state');
    try {
      const first = await replayPaths([file], sink, { batch: { batchMaxRows: 9, batchMaxBytes: 1 << 30 } });
      const rows = await sink.queryRows<McpServerStateRow>(`SELECT * FROM mcp_server_state FINAL`);
      const got = rows.map((r) => WHEN({ ...r, flags: r.flags, tool_count: r.tool_count === null ? null : Number(r.tool_count), mcp_initialized: r.mcp_initialized === null ? null : Boolean(r.mcp_initialized) } as McpServerStateRow)).sort();
      expect(got).toEqual(expected(decode(lines)));
      expect(first.mcpServerStateRows).toBe(rows.length);
      // Stored as derived, so a second replay writes no row (plain count() stays as it was).
      const plain = async (): Promise<number> => Number((await sink.queryRows<{ n: string }>(`SELECT count() AS n FROM mcp_server_state`))[0]?.n);
      const before = await plain();
      const second = await replayPaths([file], sink, { batch: { batchMaxRows: 9, batchMaxBytes: 1 << 30 } });
      expect(second.mcpServerStateRows).toBe(0);
      expect(await plain()).toBe(before);
    } finally {
      await cleanup();
    }
  }, 120_000);
});
