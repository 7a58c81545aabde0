// SPEC §2 and §7 as tests: 50 ms last-write-wins coalescing per (server, event kind), the
// client_id guard against stale disconnects, the stdio restart schedule 1 s -> 4 s -> 16 s, tool
// visibility and qualified names. Pure derivations, by event time: input order never matters.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEvent } from '../../src/decode/event.ts';
import { COALESCE_WINDOW_MS, deriveServerStates } from '../../src/mcp/lifecycle.ts';
import { deriveRegistrations, visibilityOf } from '../../src/mcp/registrations.ts';
import { mcpServerStateRowSchema, mcpToolRegistrationRowSchema, type McpEventRow, type McpServerStateRow } from '../../src/model/mcp.ts';

const T0 = Date.parse('2026-12-10T14:00:00.000Z');
let seq = 0;

interface StatusOptions {
  readonly client?: string;
  readonly transport?: 'stdio' | 'http';
  readonly attempt?: number;
  readonly backoff_ms?: number;
  readonly server?: string;
}

/** One envelope line, decoded through the real decoder (so the tests cover the schemas too). */
function decode(event: Record<string, unknown>): McpEventRow {
  const line = JSON.stringify({ schema: 'toolcanon.event/v1', harness: 'grok_build', session_id: 's-1', event_id: `e${String(++seq).padStart(6, '0')}`, ...event });
  const o = decodeEvent(Buffer.from(line), 'test', '2026-12-10 14:00:00.000');
  if (o.kind !== 'mcp') throw new Error(`not an MCP event: ${JSON.stringify(o)}`);
  return o.event;
}

const at = (ms: number): string => new Date(T0 + ms).toISOString();

function status(ms: number, state: string, o: StatusOptions = {}): McpEventRow {
  const extra = { ...(o.attempt === undefined ? {} : { attempt: o.attempt }), ...(o.backoff_ms === undefined ? {} : { backoff_ms: o.backoff_ms }) };
  return decode({ type: 'mcp_status', ts: at(ms), server: o.server ?? 'github', client_id: o.client ?? 'c1', transport: o.transport ?? 'stdio', state, ...extra });
}

function changed(ms: number, server = 'github'): McpEventRow {
  return decode({ type: 'mcp_tools_changed', ts: at(ms), server, client_id: 'c1' });
}

const derive = (events: readonly McpEventRow[]): McpServerStateRow[] => deriveServerStates(events, '2026-12-10 15:00:00.000');
const ofKind = (rows: readonly McpServerStateRow[], kind: string) => rows.filter((r) => r.event_kind === kind);
const last = (rows: readonly McpServerStateRow[]) => [...rows].sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.last_event_id < b.last_event_id ? -1 : 1)).at(-1) as McpServerStateRow;

describe('coalescing: 50 ms tumbling windows of event time, last write wins per (server, event kind)', () => {
  it('100 tools/list_changed inside one window give one row standing for all 100', () => {
    const events = Array.from({ length: 100 }, (_, i) => changed(10_000 + Math.floor(i / 3)));
    const rows = ofKind(derive(events), 'tools_changed');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.coalesced_events).toBe(100);
    expect(rows[0]?.tools_changed_events).toBe(100);
    expect(rows[0]?.window_start).toBe('2026-12-10 14:00:10.000');
  });

  it('events straddling a window boundary give two rows; the boundary itself belongs to the next window', () => {
    const rows = ofKind(derive([changed(10_049), changed(10_050)]), 'tools_changed');
    expect(rows.map((r) => [r.window_start, r.coalesced_events])).toEqual([
      ['2026-12-10 14:00:10.000', 1],
      ['2026-12-10 14:00:10.050', 1],
    ]);
    expect(ofKind(derive([changed(10_000), changed(10_049)]), 'tools_changed')).toHaveLength(1);
    expect(COALESCE_WINDOW_MS).toBe(50);
  });

  it('keys by event kind: a status and a list_changed in the same window are two rows', () => {
    const rows = derive([status(0, 'connected'), changed(10)]);
    expect(rows.map((r) => r.event_kind).sort()).toEqual(['status', 'tools_changed']);
  });

  it('keeps the latest event of a window: connecting then connected 20 ms later pushes connected', () => {
    const rows = ofKind(derive([status(0, 'connecting'), status(20, 'connected')]), 'status');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.state).toBe('connected');
    expect(rows[0]?.coalesced_events).toBe(2);
  });

  it('gives the same rows whatever order the events arrive in (property)', () => {
    const events = [status(0, 'connecting'), status(400, 'connected'), ...Array.from({ length: 30 }, (_, i) => changed(1000 + i * 7)), status(5000, 'disconnected'),
      status(6000, 'restarting', { client: 'c2', attempt: 1, backoff_ms: 1000 }), status(6500, 'connected', { client: 'c2' }), status(7000, 'disconnected', { client: 'c1' })];
    const expected = derive(events);
    fc.assert(
      fc.property(fc.shuffledSubarray(events, { minLength: events.length, maxLength: events.length }), (shuffled) => {
        expect(derive(shuffled)).toEqual(expected);
      }),
      { seed: 20261210, numRuns: 50 },
    );
  });

  it('ignores a duplicate of an event (same id): at-least-once delivery adds nothing', () => {
    const events = [status(0, 'connected'), changed(100)];
    expect(derive([...events, ...events])).toEqual(derive(events));
  });

  it('writes rows that conform to the mcp_server_state record schema', () => {
    for (const r of derive([status(0, 'connected'), changed(10), status(900, 'failed', { client: 'c1' })])) expect(mcpServerStateRowSchema.safeParse(r).success).toBe(true);
  });
});

describe('stale disconnects: the client_id guard (SPEC §7)', () => {
  const replaced = [status(0, 'connected', { client: 'old' }), status(5000, 'disconnected', { client: 'old' }), status(6000, 'restarting', { client: 'new', attempt: 1, backoff_ms: 1000 }), status(6400, 'connected', { client: 'new' })];

  it('a late disconnect of the replaced client does not remove the new one, and is counted', () => {
    const rows = derive([...replaced, status(9000, 'disconnected', { client: 'old' })]);
    const end = last(rows);
    expect(end.state).toBe('connected');
    expect(end.client_id).toBe('new');
    expect(end.stale_disconnects).toBe(1);
    expect(end.flags).toEqual(['stale_disconnect']);
  });

  it('an on-time disconnect of the current client does remove it', () => {
    const end = last(derive([...replaced, status(9000, 'disconnected', { client: 'new' })]));
    expect(end.state).toBe('disconnected');
    expect(end.stale_disconnects).toBe(0);
  });

  it('judges by event time: an old client\'s disconnect that arrives last but happened before the replacement is on time', () => {
    const early = status(5500, 'failed', { client: 'old' });
    const end = last(derive([...replaced, early]));
    expect(end.state).toBe('connected');
    expect(end.stale_disconnects).toBe(0);
  });

  it('counts a failed report of a replaced client as stale too, and a snapshot of a replaced client is flagged', () => {
    const snapshot = decode({ type: 'mcp_tools', ts: at(9500), server: 'github', client_id: 'old', mcp_initialized: true, tools: [] });
    const rows = derive([...replaced, status(9000, 'failed', { client: 'old' }), snapshot]);
    expect(last(rows).stale_disconnects).toBe(1);
    expect(ofKind(rows, 'tools')[0]?.flags).toEqual(['stale_snapshot']);
  });

  it('counts time connected against time observed', () => {
    const end = last(derive([...replaced, status(10_400, 'disconnected', { client: 'new' })]));
    expect(end.connected_ms).toBe(5000 + 4000);
    expect(end.observed_ms).toBe(10_400);
    expect(end.reconnects).toBe(1);
  });
});

/** Four stdio restart attempts after a failure each, with the given logged waits. */
function restarts(waits: readonly (number | undefined)[], transport: 'stdio' | 'http' = 'stdio', gapsMs?: readonly number[]): McpEventRow[] {
  const events = [status(0, 'connected', { client: 'c0', transport })];
  let t = 1000;
  waits.forEach((w, i) => {
    events.push(status(t, 'failed', { client: `c${i}`, transport }));
    t += gapsMs?.[i] ?? w ?? 1000;
    events.push(status(t, 'restarting', { client: `c${i + 1}`, transport, attempt: i + 1, ...(w === undefined ? {} : { backoff_ms: w }) }));
    t += 100;
  });
  return events;
}

const restartFlags = (events: readonly McpEventRow[]) => derive(events).filter((r) => r.state === 'restarting' || r.flags.length > 0).map((r) => r.flags);

describe('restart policy: stdio 1 s -> 4 s -> 16 s, guarded by disabled and removed', () => {
  it('passes 1 s / 4 s / 16 s', () => {
    expect(restartFlags(restarts([1000, 4000, 16000]))).toEqual([[], [], []]);
  });

  it('flags 1 s / 1 s / 1 s as too fast on attempts 2 and 3', () => {
    expect(restartFlags(restarts([1000, 1000, 1000]))).toEqual([[], ['restart_too_fast'], ['restart_too_fast']]);
  });

  it('flags a wait longer than the schedule as off schedule, one millisecond either side', () => {
    expect(restartFlags(restarts([1001, 3999]))).toEqual([['restart_off_schedule'], ['restart_too_fast']]);
  });

  it('flags a fourth attempt', () => {
    expect(restartFlags(restarts([1000, 4000, 16000, 16000])).at(-1)).toEqual(['restart_attempts_exceeded']);
  });

  it('uses the time since the failure when the wait is not logged: shorter is too fast, longer is latency', () => {
    expect(restartFlags(restarts([undefined, undefined], 'stdio', [1000, 3999]))).toEqual([[], ['restart_too_fast']]);
    expect(restartFlags(restarts([undefined, undefined], 'stdio', [1500, 4300]))).toEqual([[], []]);
  });

  it('flags a restart after disabled, and after removed, until a new connection is started', () => {
    const afterDisabled = [status(0, 'connected'), status(1000, 'failed'), status(1100, 'disabled'), status(2100, 'restarting', { client: 'c2', attempt: 1, backoff_ms: 1000 })];
    expect(last(derive(afterDisabled)).flags).toEqual(['restart_after_disabled']);
    const afterRemoved = [status(0, 'connected'), status(1000, 'removed'), status(2000, 'restarting', { client: 'c2', attempt: 1, backoff_ms: 1000 })];
    expect(last(derive(afterRemoved)).flags).toEqual(['restart_after_removed']);
    const reEnabled = [...afterDisabled.slice(0, 3), status(1500, 'connecting', { client: 'c2' }), status(1900, 'connected', { client: 'c2' }), status(3000, 'failed', { client: 'c2' }), status(4000, 'restarting', { client: 'c3', attempt: 1, backoff_ms: 1000 })];
    expect(derive(reEnabled).flatMap((r) => r.flags)).toEqual([]);
  });

  it('records HTTP recovery with its own backoff without checking it against the stdio schedule', () => {
    const rows = derive(restarts([200, 200, 200, 200], 'http'));
    expect(rows.flatMap((r) => r.flags)).toEqual([]);
    expect(last(rows).restarts).toBe(4);
    expect(last(rows).backoff_ms).toBe(200);
  });

  it('starts the schedule again after a successful reconnect', () => {
    const events = [...restarts([1000, 4000]), status(6500, 'connected', { client: 'c2' }), status(7000, 'failed', { client: 'c2' }), status(8000, 'restarting', { client: 'c3', backoff_ms: 1000 })];
    const end = last(derive(events));
    expect(end.restart_attempt).toBe(1);
    expect(end.flags).toEqual([]);
  });
});

describe('tool registrations: qualified names (SPEC §2) and visibility', () => {
  const ctx = { ts: '2026-12-10 14:00:00.000', harness: 'grok_build' as const, session_id: 's', agent_id: '', host: '', device_id: '', client_id: 'c', mcp_initialized: true, source: 'f:1', ingested_at: '2026-12-10 14:00:00.000' };

  it('derives model-visible, app-only, search-only and disabled, disabled first', () => {
    expect(visibilityOf({ name: 'a__b', model_visible: true, disabled: false })).toBe('model_visible');
    expect(visibilityOf({ name: 'a__b', model_visible: true, disabled: false, ui_resource_uri: 'ui://x' })).toBe('model_visible');
    expect(visibilityOf({ name: 'a__b', model_visible: false, disabled: false, ui_resource_uri: 'ui://x' })).toBe('app_only');
    expect(visibilityOf({ name: 'a__b', model_visible: false, disabled: false })).toBe('search_only');
    expect(visibilityOf({ name: 'a__b', model_visible: true, disabled: true, ui_resource_uri: 'ui://x' })).toBe('disabled');
  });

  it('gives two servers with a tool of the same name two distinct qualified names and rows', () => {
    const time = deriveRegistrations('snap-1', { ...ctx, server: 'time' }, [{ name: 'time__get_current_time', model_visible: true, disabled: false }]);
    const clock = deriveRegistrations('snap-2', { ...ctx, server: 'clock' }, [{ name: 'clock__get_current_time', model_visible: true, disabled: false }]);
    expect(time[0]?.qualified_name).toBe('time__get_current_time');
    expect(clock[0]?.qualified_name).toBe('clock__get_current_time');
    expect(time[0]?.mcp_tool).toBe(clock[0]?.mcp_tool);
    expect(time[0]?.registration_id).not.toBe(clock[0]?.registration_id);
  });

  it('qualifies a name listed without a separator with the snapshot\'s server; flags two separators, and one naming another server; strips the mcp__ prefix', () => {
    const rows = deriveRegistrations('snap', { ...ctx, server: 'linear' }, [
      { name: 'list_teams', model_visible: true, disabled: false },
      { name: 'linear__issues__list', model_visible: true, disabled: false },
      { name: 'github__create_issue', model_visible: true, disabled: false },
      { name: 'mcp__linear__get_issue', model_visible: true, disabled: false },
    ]);
    expect(rows.map((r) => r.name_qualified)).toEqual([true, false, false, false]);
    expect(rows.map((r) => [r.qualified_name, r.flags, r.mcp_server, r.mcp_tool])).toEqual([
      ['linear__list_teams', [], 'linear', 'list_teams'],
      ['linear__issues__list', ['bad_mcp_name'], '', ''],
      ['github__create_issue', ['server_mismatch'], 'github', 'create_issue'],
      ['linear__get_issue', [], 'linear', 'get_issue'],
    ]);
    for (const r of rows) expect(mcpToolRegistrationRowSchema.safeParse(r).success).toBe(true);
  });
});

describe('bad lifecycle input is a dead letter with a reason, never a crash', () => {
  const base = { schema: 'toolcanon.event/v1', ts: '2026-12-10T14:00:00.000Z', harness: 'grok_build', session_id: 's', server: 'github', client_id: 'c' };
  it.each([
    ['an unknown state', { ...base, type: 'mcp_status', transport: 'stdio', state: 'reconnecting' }, '/state'],
    ['a negative backoff', { ...base, type: 'mcp_status', transport: 'stdio', state: 'restarting', backoff_ms: -1 }, '/backoff_ms'],
    ['attempt 0', { ...base, type: 'mcp_status', transport: 'stdio', state: 'restarting', attempt: 0 }, '/attempt'],
    ['an unknown transport', { ...base, type: 'mcp_status', transport: 'sse', state: 'connected' }, '/transport'],
    ['a snapshot without tools', { ...base, type: 'mcp_tools', mcp_initialized: true }, 'tools'],
    ['a tool without visibility', { ...base, type: 'mcp_tools', mcp_initialized: true, tools: [{ name: 'github__x', disabled: false }] }, 'model_visible'],
    ['an unknown field', { ...base, type: 'mcp_tools_changed', reason: 'x' }, 'unknown field'],
  ])('%s', (_name, event, detail) => {
    const o = decodeEvent(Buffer.from(JSON.stringify(event)), 'f:1', '2026-12-10 14:00:00.000');
    expect(o.kind).toBe('dead');
    if (o.kind === 'dead') {
      expect(o.dead.reason).toBe('schema');
      expect(o.dead.detail).toContain(detail);
    }
  });
});
