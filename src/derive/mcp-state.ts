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
import { COALESCE_WINDOW_MS, deriveServerStatesFrom, hasCarry, lastRow, serverKey } from '../mcp/lifecycle.ts';
import type { McpEventRow, McpServerStateRow } from '../model/mcp.ts';
import type { ServerFrom, Sink } from '../model/sink.ts';
import { clickHouseTimeToMs, msToClickHouseTime } from '../util/time.ts';
import { sameValue } from '../discovery/copies.ts';
import type { Derivation } from './stage.ts';

/** The rows derived for a batch and how many of them are windows the table did not hold. */
export interface Derived<R> {
  readonly rows: readonly R[];
  readonly added: number;
}

const refOf = (e: McpEventRow): ServerFrom => ({ sessionId: e.session_id, agentId: e.agent_id, server: e.server });
const keyOf = (s: ServerFrom): string => serverKey({ session_id: s.sessionId, agent_id: s.agentId, server: s.server });

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

function byServer<R extends { readonly session_id: string; readonly agent_id: string; readonly server: string }>(rows: readonly R[]): Map<string, R[]> {
  const out = new Map<string, R[]>();
  for (const r of rows) {
    const k = serverKey(r);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}

/**
 * The state rows that `fresh`, lifecycle events the store does not hold yet, give: read from
 * the store as the header says, derived, counted (`added`: windows not stored before).
 */
export async function deriveMcpStates(store: Sink, fresh: readonly McpEventRow[], computedAt: string): Promise<Derived<McpServerStateRow>> {
  const servers = byServer(fresh);
  if (servers.size === 0) return { rows: [], added: 0 };
  const heads = byServer(await store.loadMcpStateHeads([...servers.values()].map((events) => refOf(events[0] as McpEventRow))));
  const rows: McpServerStateRow[] = [];
  let added = 0;
  // Servers derived again from a point on: that point (undefined: the first event).
  const again: ServerFrom[] = [];
  for (const [k, events] of servers) {
    const open = heads.get(k) ?? [];
    const last = lastRow(open);
    const first = earliest(events);
    if (last !== undefined && open.every(hasCarry) && after(first, last)) {
      const held = new Set(open.map((r) => r.state_id));
      for (const r of deriveServerStatesFrom({ before: last, open }, events, computedAt)) {
        rows.push(r);
        if (!held.has(r.state_id)) added++;
      }
    } else {
      const windowMs = Math.floor(clickHouseTimeToMs(first.ts) / COALESCE_WINDOW_MS) * COALESCE_WINDOW_MS;
      again.push({ ...refOf(first), since: last === undefined || !open.every(hasCarry) ? undefined : msToClickHouseTime(windowMs) });
    }
  }
  if (again.length === 0) return { rows, added };
  // The last row before each point; a server whose row there has no carry is read whole.
  const before = byServer(await store.loadMcpStateHeads(again.filter((s) => s.since !== undefined)));
  const from = again.map((s) => {
    const b = s.since === undefined ? undefined : lastRow(before.get(keyOf(s)) ?? []);
    return b === undefined || hasCarry(b) ? { server: s, before: b } : { server: { ...s, since: undefined }, before: undefined };
  });
  const points = from.map((f) => f.server);
  const [storedEvents, storedStates] = await Promise.all([store.loadMcpEvents(points), store.loadMcpStates(points)]);
  const stored = byServer(storedEvents);
  const held = new Map(storedStates.map((r) => [r.state_id, r]));
  for (const { server, before: b } of from) {
    const k = keyOf(server);
    const events = [...(stored.get(k) ?? []), ...(servers.get(k) ?? [])];
    for (const r of deriveServerStatesFrom({ before: b, open: [] }, events, computedAt)) {
      const had = held.get(r.state_id);
      // A window that comes out as stored (events sent again, a rerun) is not written again.
      if (had !== undefined && sameRow(had, r)) continue;
      rows.push(r);
      if (had === undefined) added++;
    }
  }
  return { rows, added };
}

/** The MCP server-state derivation: the lifecycle events a batch stores are its input. */
export const mcpStateDerivation: Derivation<McpEventRow> = {
  name: 'mcp_server_state',
  async run(store, items, computedAt) {
    // Events stored already (a second replay, a redelivery) changed nothing when they were derived.
    const derived = await deriveMcpStates(store, await store.mcpEventsNotStored(items), computedAt);
    await store.writeMcpServerStates(derived.rows);
    return derived.added;
  },
};
