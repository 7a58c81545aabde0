// mcp_server_state as a derivation (issue 31 step 2): a batch's new lifecycle events continue
// each server from its last stored state (the carry of its last row), never from its history.
//
// - In order (the common case: every new event of a server comes after its last stored one in
//   event time): the server's last row of each event kind is read (a few granules, however long
//   the server's history) and the events continue from the latest of them.
// - Late (an event at or before the last stored one): the windows from the earliest new event's
//   on are derived again, from the last row before them and the stored events from there on.
//   What is read is bounded by how late the event is, not by the history before it.
// - A server whose rows have no carry (stored before migration 13) or none at all is derived
//   from all its events once, as every batch was before; its rows then carry their state.
// Every path gives the rows deriveServerStates gives for all the server's events (its windows
// from the point read), so replay, import and Kafka in any batching agree
// (test/derive/mcp-state.test.ts holds that on both stores, with late and repeated events).
import { COALESCE_WINDOW_MS, deriveServerStatesFrom, hasCarry, lastRow } from '../mcp/lifecycle.ts';
import type { McpEventRow, McpServerStateRow } from '../model/mcp.ts';
import type { ServerFrom, Sink } from '../model/sink.ts';
import { groupBy } from '../util/group.ts';
import { clickHouseTimeToMs, msToClickHouseTime } from '../util/time.ts';
import { sameValue } from '../discovery/copies.ts';
import type { Derivation } from './stage.ts';

const refOf = (e: McpEventRow): ServerFrom => ({ sessionId: e.session_id, agentId: e.agent_id, server: e.server });
const keyOf = (s: ServerFrom): string => stateKey({ session_id: s.sessionId, agent_id: s.agentId, server: s.server });

/** True when two state rows say the same in every column but their version (values as the engine gives them back). */
function sameRow(a: McpServerStateRow, b: McpServerStateRow): boolean {
  for (const c of Object.keys(b) as (keyof McpServerStateRow)[]) if (c !== 'computed_at' && !sameValue(a[c], b[c])) return false;
  return true;
}

/** True when event `e` comes after row `r`'s winning event in event time (ts, then id). */
function after(e: McpEventRow, r: McpServerStateRow): boolean {
  return e.ts > r.ts || (e.ts === r.ts && e.event_id > r.last_event_id);
}

function earliest(events: readonly McpEventRow[]): McpEventRow {
  let first = events[0] as McpEventRow;
  for (const e of events) if (e.ts < first.ts || (e.ts === first.ts && e.event_id < first.event_id)) first = e;
  return first;
}

const DERIVATION = 'mcp_server_state';
/** A server's key, also in derivation_state (JSON: a NUL would end the value in a server's URL parameter). */
function stateKey(s: { readonly session_id: string; readonly agent_id: string; readonly server: string }): string {
  return JSON.stringify([s.session_id, s.agent_id, s.server]);
}

function byServer<R extends { readonly session_id: string; readonly agent_id: string; readonly server: string }>(rows: readonly R[]): Map<string, R[]> {
  return groupBy(rows, stateKey);
}

/**
 * Of each event kind, the row of the latest window (a later row given wins a tie), as kept in
 * derivation_state: without its version (computed_at), so the state is a function of the events.
 */
function headsOf(rows: readonly McpServerStateRow[]): string {
  const out = new Map<string, McpServerStateRow>();
  for (const r of rows) {
    const had = out.get(r.event_kind);
    if (had === undefined || r.window_start >= had.window_start) out.set(r.event_kind, r);
  }
  const kinds = [...out.keys()].sort();
  return JSON.stringify(kinds.map((k) => {
    const { computed_at: _version, ...head } = out.get(k) as McpServerStateRow;
    return head;
  }));
}

function readHeads(text: string | undefined): McpServerStateRow[] | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? (v as McpServerStateRow[]) : undefined;
  } catch {
    return undefined;
  }
}

/** What a batch's events derive: the rows to write, how many are windows the table did not hold, and each server's heads to keep. */
export interface DerivedStates {
  readonly rows: readonly McpServerStateRow[];
  readonly added: number;
  readonly heads: Map<string, string>;
}

/**
 * The state rows that `fresh`, lifecycle events the store does not hold yet, give: read from
 * the store as the header says, derived, counted (`added`: windows not stored before). Each
 * server's heads (its latest row of each event kind, with their carries) are kept in
 * derivation_state, so the common case reads one entry per server, however many rows it has.
 */
export async function deriveMcpStates(store: Sink, fresh: readonly McpEventRow[], computedAt: string): Promise<DerivedStates> {
  const servers = byServer(fresh);
  const heads = new Map<string, string>();
  if (servers.size === 0) return { rows: [], added: 0, heads };
  const kept = await store.loadDerivationState(DERIVATION, [...servers.keys()]);
  const rows: McpServerStateRow[] = [];
  let added = 0;
  // Servers derived again from a point on: that point (undefined: the first event), and their heads before.
  const again: { server: ServerFrom; open: McpServerStateRow[] }[] = [];
  for (const [k, events] of servers) {
    const first = earliest(events);
    const open = readHeads(kept.get(k));
    const last = open === undefined ? undefined : lastRow(open);
    if (open !== undefined && last !== undefined && open.every(hasCarry) && after(first, last)) {
      const held = new Set(open.map((r) => r.state_id));
      const derived = deriveServerStatesFrom({ before: last, open }, events, computedAt);
      for (const r of derived) {
        rows.push(r);
        if (!held.has(r.state_id)) added++;
      }
      heads.set(k, headsOf([...open, ...derived]));
    } else {
      // No heads kept (a new server, or one whose rows were stored before migration 14): from its first event.
      const windowMs = Math.floor(clickHouseTimeToMs(first.ts) / COALESCE_WINDOW_MS) * COALESCE_WINDOW_MS;
      const whole = open === undefined || last === undefined || !open.every(hasCarry);
      again.push({ server: { ...refOf(first), since: whole ? undefined : msToClickHouseTime(windowMs) }, open: open ?? [] });
    }
  }
  if (again.length === 0) return { rows, added, heads };
  // The last row before each point (a rare read: late events only); a server whose row there has no carry is read whole.
  const before = byServer(await store.loadMcpStateHeads(again.filter((a) => a.server.since !== undefined).map((a) => a.server)));
  const from = again.map(({ server: s, open }) => {
    const b = s.since === undefined ? undefined : lastRow(before.get(keyOf(s)) ?? []);
    return b === undefined || hasCarry(b) ? { server: s, before: b, open } : { server: { ...s, since: undefined }, before: undefined, open };
  });
  const points = from.map((f) => f.server);
  const [storedEvents, storedStates] = await Promise.all([store.loadMcpEvents(points), store.loadMcpStates(points)]);
  const stored = byServer(storedEvents);
  const held = new Map(storedStates.map((r) => [r.state_id, r]));
  for (const { server, before: b, open } of from) {
    const k = keyOf(server);
    const events = [...(stored.get(k) ?? []), ...(servers.get(k) ?? [])];
    const derived = deriveServerStatesFrom({ before: b, open: [] }, events, computedAt);
    for (const r of derived) {
      const had = held.get(r.state_id);
      // A window that comes out as stored (events sent again, a rerun) is not written again.
      if (had !== undefined && sameRow(had, r)) continue;
      rows.push(r);
      if (had === undefined) added++;
    }
    // Read whole, every window was derived again; from a point, the kept heads of kinds it did not reach stay.
    heads.set(k, headsOf([...(server.since === undefined ? [] : open), ...derived]));
  }
  return { rows, added, heads };
}

/**
 * The MCP server-state derivation. Its input is a batch's lifecycle events; those the store
 * already holds (a second replay, a redelivery: Sink.mcpEventsNotStored) changed nothing when
 * they were derived and are passed over. It stores the new events too, after their states: a run
 * killed between the two finds the events not stored on the rerun and derives them again.
 */
export const mcpStateDerivation: Derivation<McpEventRow> = {
  name: 'mcp_server_state',
  select: (batch) => batch.mcpEvents,
  async run(store, items, computedAt) {
    const fresh = await store.mcpEventsNotStored(items);
    const derived = await deriveMcpStates(store, fresh, computedAt);
    // The heads before the rows: a run killed between the two finds heads past its events on
    // the rerun, derives them again from the stored rows (the late path) and writes what is missing.
    await store.writeDerivationState(DERIVATION, derived.heads, computedAt);
    await store.writeMcpServerStates(derived.rows);
    await store.writeMcpEvents(fresh);
    return { mcpServerStateRows: derived.added };
  },
};
