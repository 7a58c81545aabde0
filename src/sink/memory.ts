// The store ports (model/sink.ts) in memory, for unit tests of the logic above them (the batch
// writer, the accounting, the MCP and discovery derivations): each analytics table is the list
// of rows written to it, read back as ClickHouse's FINAL reads a ReplacingMergeTree — of the
// rows with one sorting key (the table's ORDER BY, from its declaration in src/tables/), the one
// with the highest version, the last written among equals. It keeps no partitions, merges or
// insert-time filtering: plain count() semantics are the engine's, tested end to end on it
// (test/sink/plain-count.e2e.test.ts). test/sink/memory.test.ts holds a replay into this store
// equal, table by table, to the same replay into the embedded engine.
import type { DeadLetterRow, ToolCallRow } from '../model/records.ts';
import type { DiscoveryEventRow, McpEventRow, McpServerStateRow, McpToolRegistrationRow } from '../model/mcp.ts';
import type { AppliedEvent, ContextRef, ServerFrom, Sink, ToolSince, StoredContext, ToolCallBatch } from '../model/sink.ts';
import type { BreachRow, TokenUsageRow } from '../model/usage.ts';
import { TABLE, TABLES, type AnalyticsTable } from '../tables/index.ts';

type AnyRow = Record<string, unknown>;

/** The sorting key's columns of a table, from its declaration's ORDER BY: `(a, b)` or `a`. */
function keyColumns(orderBy: string): string[] {
  return orderBy.replace(/^\(|\)$/g, '').split(',').map((c) => c.trim());
}

/** A ClickHouse time text ('YYYY-MM-DD hh:mm:ss.sss', UTC) in milliseconds. */
function millis(time: unknown): bigint {
  const ms = Date.parse(`${String(time).replace(' ', 'T')}Z`);
  return BigInt(Number.isNaN(ms) ? 0 : ms);
}

/**
 * A row's version as its table's engine computes it: the engine's version column, or for
 * tool_calls its row_version (src/tables/tool-calls.ts: a finished copy over a pending one, then
 * the one with more bytes, then the later ingested).
 */
function versionOf(table: AnalyticsTable, row: AnyRow): bigint {
  if (table === 'tool_calls') {
    const at = millis(row['ingested_at']);
    if (row['status'] === 'pending') return at;
    const bytes = BigInt(Math.min(Number(row['input_bytes']) + Number(row['output_bytes']), 99_999));
    return 1_000_000_000_000_000_000n + bytes * 10_000_000_000_000n + at;
  }
  const column = /\((\w+)\)/.exec(TABLE[table].engine)?.[1];
  return column === undefined ? 0n : millis(row[column]);
}

class MemoryToolCallBatch implements ToolCallBatch {
  readonly list: ToolCallRow[] = [];
  bytes = 0;
  add(row: ToolCallRow): void {
    this.list.push(row);
    this.bytes += row.raw_input.length + row.canonical_input.length;
  }
  get rows(): number {
    return this.list.length;
  }
}

export class MemorySink implements Sink {
  readonly description = 'memory';
  private readonly written = new Map<AnalyticsTable, AnyRow[]>(TABLES.map((t) => [t.name, []]));

  /** Every row written to a table, in the order written (what a plain SELECT before any merge sees). */
  rows(table: AnalyticsTable): readonly AnyRow[] {
    return this.written.get(table) ?? [];
  }

  /** A table as FINAL reads it: one row per sorting key, the highest version (the last written among equals). */
  final(table: AnalyticsTable): AnyRow[] {
    const key = keyColumns(TABLE[table].orderBy);
    const best = new Map<string, { row: AnyRow; version: bigint }>();
    for (const row of this.rows(table)) {
      const k = JSON.stringify(key.map((c) => row[c]));
      const version = versionOf(table, row);
      const held = best.get(k);
      if (held === undefined || version >= held.version) best.set(k, { row, version });
    }
    return [...best.values()].map((b) => b.row);
  }

  private write(table: AnalyticsTable, rows: readonly object[]): Promise<void> {
    const list = this.written.get(table) as AnyRow[];
    for (const r of rows) list.push({ ...(r as AnyRow) });
    return Promise.resolve();
  }

  toolCallBatch(_sizeHint = 0): ToolCallBatch {
    return new MemoryToolCallBatch();
  }
  writeToolCalls(batch: ToolCallBatch): Promise<void> {
    if (!(batch instanceof MemoryToolCallBatch)) throw new TypeError('writeToolCalls takes a batch made by this sink (toolCallBatch)');
    return this.write('tool_calls', batch.list);
  }
  writeDeadLetters(rows: readonly DeadLetterRow[]): Promise<void> {
    return this.write('dead_letters', rows);
  }
  writeTokenUsage(rows: readonly TokenUsageRow[]): Promise<void> {
    return this.write('token_usage', rows);
  }
  writeBreaches(rows: readonly BreachRow[]): Promise<void> {
    return this.write('threshold_breaches', rows);
  }
  writeMcpEvents(rows: readonly McpEventRow[]): Promise<void> {
    return this.write('mcp_events', rows);
  }
  mcpEventsNotStored(rows: readonly McpEventRow[]): Promise<readonly McpEventRow[]> {
    // As the engine's sink: the events not held yet (by server and event id), the last copy of one given twice.
    const key = (r: McpEventRow): string => JSON.stringify([r.session_id, r.agent_id, r.server, r.event_id]);
    const held = new Set((this.rows('mcp_events') as unknown as McpEventRow[]).map(key));
    const last = new Map<string, McpEventRow>();
    for (const r of rows) {
      if (held.has(key(r))) continue;
      last.delete(key(r));
      last.set(key(r), r);
    }
    return Promise.resolve([...last.values()]);
  }
  writeMcpServerStates(rows: readonly McpServerStateRow[]): Promise<void> {
    return this.write('mcp_server_state', rows);
  }
  writeMcpToolRegistrations(rows: readonly McpToolRegistrationRow[]): Promise<void> {
    return this.write('mcp_tool_registrations', rows);
  }
  writeDiscoveryEvents(rows: readonly DiscoveryEventRow[]): Promise<void> {
    return this.write('discovery_events', rows);
  }

  /** Of each (key) the latest row by `time`, among the rows `wanted` keeps. */
  private latestBy<R extends AnyRow>(table: AnalyticsTable, wanted: (r: R) => boolean, key: (r: R) => string, time: keyof R & string): R[] {
    const latest = new Map<string, R>();
    for (const r of this.rows(table) as R[]) {
      if (!wanted(r)) continue;
      const k = key(r);
      const held = latest.get(k);
      if (held === undefined || millis(r[time]) >= millis(held[time])) latest.set(k, r);
    }
    return [...latest.values()];
  }

  /** The time each server's read starts at (or ends before), by server; '' for none. */
  private static bounds(servers: readonly ServerFrom[]): Map<string, string> {
    return new Map(servers.map((s) => [JSON.stringify([s.sessionId, s.agentId, s.server]), s.since ?? '']));
  }

  loadMcpEvents(servers: readonly ServerFrom[]): Promise<McpEventRow[]> {
    const since = MemorySink.bounds(servers);
    const from = (r: McpEventRow): string | undefined => since.get(JSON.stringify([r.session_id, r.agent_id, r.server]));
    const rows = this.latestBy<McpEventRow & AnyRow>('mcp_events', (r) => { const b = from(r); return b !== undefined && millis(r.ts) >= millis(b); }, (r) => JSON.stringify([r.session_id, r.agent_id, r.server, r.event_id]), 'ingested_at');
    return Promise.resolve(rows.map((r) => ({ ...r, raw: '' })));
  }

  /** The stored state rows of these servers as FINAL reads them, with the bound of each row's server. */
  private mcpStates(servers: readonly ServerFrom[]): { row: McpServerStateRow; bound: string }[] {
    const bounds = MemorySink.bounds(servers);
    const out: { row: McpServerStateRow; bound: string }[] = [];
    for (const r of this.final('mcp_server_state') as unknown as McpServerStateRow[]) {
      const bound = bounds.get(JSON.stringify([r.session_id, r.agent_id, r.server]));
      if (bound !== undefined) out.push({ row: r, bound });
    }
    return out;
  }

  loadMcpStateHeads(servers: readonly ServerFrom[]): Promise<McpServerStateRow[]> {
    const heads = new Map<string, McpServerStateRow>();
    for (const { row, bound } of this.mcpStates(servers)) {
      if (bound !== '' && millis(row.window_start) >= millis(bound)) continue;
      const k = JSON.stringify([row.session_id, row.agent_id, row.server, row.event_kind]);
      const held = heads.get(k);
      if (held === undefined || millis(row.window_start) > millis(held.window_start)) heads.set(k, row);
    }
    return Promise.resolve([...heads.values()]);
  }

  loadMcpStates(servers: readonly ServerFrom[]): Promise<McpServerStateRow[]> {
    return Promise.resolve(this.mcpStates(servers).filter(({ row, bound }) => bound === '' || millis(row.window_start) >= millis(bound)).map(({ row }) => row));
  }

  loadDiscoveryObservations(contexts: readonly ContextRef[]): Promise<DiscoveryEventRow[]> {
    const want = new Set(contexts.map((c) => JSON.stringify([c.sessionId, c.agentId])));
    return Promise.resolve(
      this.latestBy<DiscoveryEventRow & AnyRow>('discovery_events', (r) => want.has(JSON.stringify([r.session_id, r.agent_id])), (r) => JSON.stringify([r.session_id, r.agent_id, r.event_id]), 'computed_at'),
    );
  }

  /** The stored discovery rows (the latest computed copy of each event) that `wanted` keeps. */
  private discoveryRows(wanted: (r: DiscoveryEventRow) => boolean): DiscoveryEventRow[] {
    return this.latestBy<DiscoveryEventRow & AnyRow>('discovery_events', wanted, (r) => JSON.stringify([r.session_id, r.agent_id, r.event_id]), 'computed_at');
  }

  loadDiscoveryRows(events: readonly (ContextRef & { readonly eventId: string })[], turns: readonly (ContextRef & { readonly turnId: string })[]): Promise<DiscoveryEventRow[]> {
    const ids = new Set(events.map((e) => JSON.stringify([e.sessionId, e.agentId, e.eventId])));
    const inTurns = new Set(turns.map((t) => JSON.stringify([t.sessionId, t.agentId, t.turnId])));
    return Promise.resolve(this.discoveryRows((r) => ids.has(JSON.stringify([r.session_id, r.agent_id, r.event_id])) || inTurns.has(JSON.stringify([r.session_id, r.agent_id, r.turn_id]))));
  }

  loadDiscoveryCalls(tools: readonly ToolSince[]): Promise<DiscoveryEventRow[]> {
    const since = new Map(tools.map((t) => [JSON.stringify([t.sessionId, t.agentId, t.tool]), millis(t.since)]));
    return Promise.resolve(
      this.discoveryRows((r) => {
        const from = r.discovery_kind === 'call' ? since.get(JSON.stringify([r.session_id, r.agent_id, r.called_tool])) : undefined;
        return from !== undefined && millis(r.ts) >= from;
      }),
    );
  }

  /** Derivation states, by derivation and key: the last written. */
  private readonly states = new Map<string, string>();

  loadDerivationState(derivation: string, keys: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const k of keys) {
      const state = this.states.get(JSON.stringify([derivation, k]));
      if (state !== undefined) out.set(k, state);
    }
    return Promise.resolve(out);
  }

  writeDerivationState(derivation: string, states: ReadonlyMap<string, string>, _computedAt: string): Promise<void> {
    for (const [k, state] of states) this.states.set(JSON.stringify([derivation, k]), state);
    return Promise.resolve();
  }

  latestUsage(contexts: readonly ContextRef[]): Promise<StoredContext[]> {
    const want = new Set(contexts.map((c) => JSON.stringify([c.sessionId, c.agentId])));
    // The latest ingested copy of each row (its sorting key), then per context the highest sequence (then the latest event time).
    const copies = this.latestBy<TokenUsageRow & AnyRow>('token_usage', (r) => want.has(JSON.stringify([r.session_id, r.agent_id])), (r) => JSON.stringify([r.session_id, r.agent_id, r.source, r.event_id]), 'ingested_at');
    const latest = new Map<string, TokenUsageRow>();
    for (const r of copies) {
      const k = JSON.stringify([r.session_id, r.agent_id]);
      const held = latest.get(k);
      const later = held === undefined || BigInt(r.session_seq) > BigInt(held.session_seq) || (BigInt(r.session_seq) === BigInt(held.session_seq) && millis(r.ts) >= millis(held.ts));
      if (later) latest.set(k, r);
    }
    return Promise.resolve(
      [...latest.values()].map((r) => ({
        session_id: r.session_id,
        agent_id: r.agent_id,
        context_tokens: r.context_tokens,
        context_source: r.context_source,
        model: r.model,
        context_window_tokens: r.context_window_tokens,
        above_threshold: r.above_threshold,
        last_observed_context: r.last_observed_context,
        estimated_since_observed: r.estimated_since_observed,
        classes_since_observed: r.classes_since_observed,
        session_seq: r.session_seq,
      })),
    );
  }

  appliedEvents(events: readonly (ContextRef & { readonly eventId: string })[]): Promise<AppliedEvent[]> {
    const sessions = new Set(events.map((e) => e.sessionId));
    const ids = new Set(events.map((e) => e.eventId));
    const rows = this.latestBy<TokenUsageRow & AnyRow>('token_usage', (r) => sessions.has(r.session_id) && ids.has(r.event_id), (r) => JSON.stringify([r.session_id, r.agent_id, r.event_id]), 'ingested_at');
    const t = (v: string | null): string => v ?? '';
    return Promise.resolve(
      rows.map((r) => ({
        session_id: r.session_id,
        agent_id: r.agent_id,
        event_id: r.event_id,
        figures: r.source === 'observed' ? `${r.input_tokens}/${r.output_tokens}/${t(r.cache_read_tokens)}/${t(r.cache_write_tokens)}/${t(r.reasoning_tokens)}` : '',
      })),
    );
  }
}
