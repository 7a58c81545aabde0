// The MCP connection lifecycle (SPEC §7) derived from raw status events, by event time: a pure
// function of all the events of one server in one session, so a replay, an import and a Kafka
// run of the same events (in any order, split into any batches) give the same rows.
//
// - Coalescing: events keyed by (server, event_kind) fall into 50 ms tumbling windows of their
//   `ts` (aligned to the epoch); per key and window the last event (by ts, then event_id) wins:
//   one row, carrying the server's state after it and how many events it stands for.
// - Stale disconnects: a `disconnected` or `failed` whose client_id is not the server's current
//   client (the one that last announced itself with connecting / connected / restarting) leaves
//   the state in place and is counted (and flagged on its window's row).
// - Restart policy: stdio restarts wait 1 s, 4 s, 16 s (attempts 1-3 since the last successful
//   connection). `restarting` is the start of an attempt; its wait is `backoff_ms` when logged
//   (checked exactly: shorter is too fast, longer is off schedule), otherwise the time since the
//   failure before it (only a wait shorter than the schedule is flagged: logging adds latency).
//   A 4th attempt, and any restart after `disabled` or `removed` (until a new `connecting`), is
//   flagged. HTTP recovers with its own backoff: recorded, never checked against the stdio one.
import { groupBy } from '../util/group.ts';
import { idOf } from '../util/hash.ts';
import { clickHouseTimeToMs, msToClickHouseTime } from '../util/time.ts';
import type { McpEventRow, McpServerStateRow } from '../model/mcp.ts';
import type { McpStateFlag } from '../model/mcp-vocabulary.ts';

export const COALESCE_WINDOW_MS = 50;
/** Expected waits of stdio restart attempts 1, 2 and 3. */
export const STDIO_RESTART_BACKOFF_MS = [1_000, 4_000, 16_000] as const;

/** The key of one server's lifecycle: its session, agent and name. */
export function serverKey(e: Pick<McpEventRow, 'session_id' | 'agent_id' | 'server'>): string {
  return `${e.session_id}\u0000${e.agent_id}\u0000${e.server}`;
}

/**
 * The events in event-time order with a deterministic tie-break (the id), one copy per id,
 * whatever the arrival order: what every derivation by event time starts from.
 */
export function inEventTime<T extends { readonly ts: string; readonly event_id: string }>(events: readonly T[]): T[] {
  const seen = new Set<string>();
  return events
    .filter((e) => (seen.has(e.event_id) ? false : (seen.add(e.event_id), true)))
    .sort((a, b) => (a.ts !== b.ts ? (a.ts < b.ts ? -1 : 1) : a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0));
}

interface ServerState {
  clientId: string;
  transport: string;
  state: string;
  sinceMs: number;
  connectedMs: number;
  everConnected: boolean;
  reconnects: number;
  staleDisconnects: number;
  restarts: number;
  attemptsSinceConnected: number;
  restartAttempt: number;
  backoffMs: number | null;
  /** When the last failure (or attempt start) happened: the start of the next wait. */
  lastFailureMs: number | null;
  /** `disabled` or `removed` while no new connection was started since. */
  stoppedBy: '' | 'disabled' | 'removed';
  toolsChanged: number;
  toolCount: number | null;
  mcpInitialized: boolean | null;
  error: string;
}

/** The state a server starts in, before its first event. */
function initialState(firstMs: number): ServerState {
  return {
    clientId: '',
    transport: '',
    state: '',
    sinceMs: firstMs,
    connectedMs: 0,
    everConnected: false,
    reconnects: 0,
    staleDisconnects: 0,
    restarts: 0,
    attemptsSinceConnected: 0,
    restartAttempt: 0,
    backoffMs: null,
    lastFailureMs: null,
    stoppedBy: '',
    toolsChanged: 0,
    toolCount: null,
    mcpInitialized: null,
    error: '',
  };
}

/** A row's carry: the server's first event time and its state after the row's winning event. */
function carryOf(firstMs: number, s: ServerState): string {
  return JSON.stringify([firstMs, s]);
}

/** The first event time and state a carry holds, or undefined when it holds none (rows stored before carries, or damaged). */
function readCarry(text: string): { firstMs: number; state: ServerState } | undefined {
  if (text === '') return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    if (!Array.isArray(v) || typeof v[0] !== 'number' || typeof v[1] !== 'object' || v[1] === null) return undefined;
    const state = { ...initialState(v[0]), ...(v[1] as Partial<ServerState>) };
    return { firstMs: v[0], state };
  } catch {
    return undefined;
  }
}

/** True when a stored row's carry can be continued from. */
export function hasCarry(row: Pick<McpServerStateRow, 'carry'>): boolean {
  return readCarry(row.carry) !== undefined;
}

/**
 * Where a derivation of one server starts when the server already has stored rows:
 * `before`, the stored row whose winning event is the last one before the events given (its
 * carry is the state the events continue from; undefined: the events given start the server);
 * `open`, stored rows the events may coalesce into (their window and kind), which continue.
 */
export interface ServerStart {
  readonly before: McpServerStateRow | undefined;
  readonly open: readonly McpServerStateRow[];
}

/** The stored row whose winning event comes last in event time (ts, then event id), of the rows given. */
export function lastRow(rows: readonly McpServerStateRow[]): McpServerStateRow | undefined {
  let last: McpServerStateRow | undefined;
  for (const r of rows) {
    if (last === undefined || r.ts > last.ts || (r.ts === last.ts && r.last_event_id > last.last_event_id)) last = r;
  }
  return last;
}

/**
 * The server-state rows of one server (all events share session, agent and server; duplicates
 * by event_id are ignored). `computedAt` is the version the table keeps the latest of.
 */
export function deriveServerStates(events: readonly McpEventRow[], computedAt: string): McpServerStateRow[] {
  return deriveServerStatesFrom({ before: undefined, open: [] }, events, computedAt);
}

/**
 * The rows the events give when they follow `start` (every event comes after `start.before`'s
 * winning event, in event time): the rows of every window they fall in, `open` rows they
 * coalesce into continued. Equal to the rows of those windows that deriveServerStates gives for
 * all the server's events, so a batch reads the last state of its server, not its history.
 */
export function deriveServerStatesFrom(start: ServerStart, events: readonly McpEventRow[], computedAt: string): McpServerStateRow[] {
  const ordered = inEventTime(events);
  const first = ordered[0];
  if (first === undefined) return [];
  const carried = start.before === undefined ? undefined : readCarry(start.before.carry);
  if (start.before !== undefined && carried === undefined) throw new Error(`mcp_server_state row ${start.before.state_id} has no carry to continue from`);
  const firstMs = carried?.firstMs ?? clickHouseTimeToMs(first.ts);
  const s: ServerState = carried?.state ?? initialState(firstMs);
  const groups = new Map<string, { row: McpServerStateRow; flags: Set<McpStateFlag> }>();
  for (const r of start.open) groups.set(`${r.event_kind}\u0000${clickHouseTimeToMs(r.window_start)}`, { row: r, flags: new Set(r.flags) });
  const touched = new Set<string>();
  for (const e of ordered) {
    const ms = clickHouseTimeToMs(e.ts);
    const flags: McpStateFlag[] = [];
    if (e.event_kind === 'status') applyStatus(s, e, ms, flags);
    else if (e.event_kind === 'tools') {
      if (s.clientId !== '' && e.client_id !== s.clientId) flags.push('stale_snapshot');
      else {
        if (s.clientId === '') s.clientId = e.client_id; // a snapshot names its client too
        s.toolCount = e.tool_count;
        s.mcpInitialized = e.mcp_initialized;
      }
    } else s.toolsChanged++;

    const windowMs = Math.floor(ms / COALESCE_WINDOW_MS) * COALESCE_WINDOW_MS;
    const key = `${e.event_kind}\u0000${windowMs}`;
    const group = groups.get(key);
    const union = group?.flags ?? new Set<McpStateFlag>();
    for (const f of flags) union.add(f);
    const row: McpServerStateRow = {
      state_id: idOf(serverKey(e), e.event_kind, String(windowMs)),
      harness: e.harness,
      session_id: e.session_id,
      agent_id: e.agent_id,
      // The machine of the window's winning event (a session's events come from one machine).
      host: e.host,
      device_id: e.device_id,
      server: e.server,
      event_kind: e.event_kind,
      window_start: msToClickHouseTime(windowMs),
      ts: e.ts,
      coalesced_events: (group?.row.coalesced_events ?? 0) + 1,
      last_event_id: e.event_id,
      client_id: s.clientId,
      transport: s.transport,
      state: s.state,
      since: msToClickHouseTime(s.sinceMs),
      connected_ms: s.connectedMs + (s.state === 'connected' ? ms - s.sinceMs : 0),
      observed_ms: ms - firstMs,
      reconnects: s.reconnects,
      stale_disconnects: s.staleDisconnects,
      restarts: s.restarts,
      restart_attempt: s.restartAttempt,
      backoff_ms: s.backoffMs,
      tools_changed_events: s.toolsChanged,
      tool_count: s.toolCount,
      mcp_initialized: s.mcpInitialized,
      error: s.error,
      flags: [...union].sort(),
      carry: carryOf(firstMs, s),
      computed_at: computedAt,
    };
    groups.set(key, { row, flags: union });
    touched.add(key);
  }
  return [...touched].map((k) => (groups.get(k) as { row: McpServerStateRow }).row);
}

/** The server-state rows of every server the events belong to, by serverKey. */
export function deriveServerStatesPerServer(events: readonly McpEventRow[], computedAt: string): Map<string, McpServerStateRow[]> {
  return new Map([...groupBy(events, serverKey)].map(([k, list]) => [k, deriveServerStates(list, computedAt)]));
}

function applyStatus(s: ServerState, e: McpEventRow, ms: number, flags: McpStateFlag[]): void {
  const state = e.state;
  if ((state === 'disconnected' || state === 'failed') && s.clientId !== '' && e.client_id !== s.clientId) {
    // A replaced client's death: the current client stays (SPEC §7).
    s.staleDisconnects++;
    flags.push('stale_disconnect');
    return;
  }
  if (state === 'connecting' || state === 'connected' || state === 'restarting') {
    s.clientId = e.client_id;
    s.transport = e.transport;
  }
  if (state === 'connecting') s.stoppedBy = '';
  if (state === 'restarting') {
    if (s.stoppedBy === 'disabled') flags.push('restart_after_disabled');
    if (s.stoppedBy === 'removed') flags.push('restart_after_removed');
    s.restarts++;
    s.attemptsSinceConnected++;
    const attempt = e.attempt ?? s.attemptsSinceConnected;
    const waited = e.backoff_ms ?? (s.lastFailureMs === null ? null : ms - s.lastFailureMs);
    s.restartAttempt = attempt;
    s.backoffMs = waited;
    if (e.transport === 'stdio') {
      const expected = STDIO_RESTART_BACKOFF_MS[attempt - 1];
      if (expected === undefined) flags.push('restart_attempts_exceeded');
      else if (waited !== null) {
        if (waited < expected) flags.push('restart_too_fast');
        else if (e.backoff_ms !== null && waited > expected) flags.push('restart_off_schedule');
      }
    }
    s.lastFailureMs = ms;
  }
  if (state === 'connected') {
    if (s.everConnected && s.state !== 'connected') s.reconnects++;
    s.everConnected = true;
    s.attemptsSinceConnected = 0;
    s.stoppedBy = '';
    s.error = '';
  }
  if (state === 'disconnected' || state === 'failed') s.lastFailureMs = ms;
  if (state === 'disabled' || state === 'removed') s.stoppedBy = state;
  if (e.error !== '') s.error = e.error;
  if (state !== s.state) {
    if (s.state === 'connected') s.connectedMs += ms - s.sinceMs;
    s.state = state;
    s.sinceMs = ms;
  }
}
