// discovery_events as a derivation (issue 31 step 2). A row depends on its own turn (the
// search's place and budget, whether a refusal recovered) and on one fact of the whole context:
// whether a search before it listed the tool it calls. So a batch reads, per session context:
//   - its state (derivation_state, key session and agent): the context's last observation and,
//     per tool, the first search (in event time) that listed it: a few hundred entries at most,
//     however long the session;
//   - the stored rows of the batch's turns and of its events' earlier copies (an index reads them);
//   - when a batch's search lists a tool earlier than any stored one did, the stored calls of
//     that tool after it (a late search: their after_search may turn true).
// A context with stored rows and no state (rows stored before migration 14), and a batch that
// moves an event or takes a listing back (a copy that replaces a stored one with another time,
// turn or fewer listed tools), is derived from all its rows, as every batch was before.
// Every path gives the rows deriveDiscoveryPerContext gives for all the context's observations,
// so any batching and order agree (test/derive/discovery.test.ts, both stores).
import { chooseCopies, changedRows, copiesToRank, copyVersions } from '../discovery/copies.ts';
import { deriveDiscovery, deriveDiscoveryPerContext } from '../discovery/discovery.ts';
import type { DiscoveryEventRow, DiscoveryObservation } from '../model/mcp.ts';
import type { ContextRef, Sink, ToolSince } from '../model/sink.ts';
import { groupBy } from '../util/group.ts';
import type { Derivation } from './stage.ts';

const DERIVATION = 'discovery';

/** An observation's place in event time: its time, then its event id. */
type Position = readonly [ts: string, eventId: string];

interface ContextState {
  /** The last observation stored (null: none). */
  last: Position | null;
  /** Per tool, the first search that listed it. */
  listed: Map<string, Position>;
}

const positionOf = (o: DiscoveryObservation): Position => [o.ts, o.event_id];
const earlier = (a: Position, b: Position): boolean => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
/** A context's key, also its key in derivation_state (JSON: a NUL would end the value in a server's URL parameter). */
const contextKey = (o: { readonly session_id: string; readonly agent_id: string }): string => JSON.stringify([o.session_id, o.agent_id]);
const eventKey = (o: DiscoveryObservation): string => `${o.session_id}\u0000${o.agent_id}\u0000${o.event_id}`;
const refOf = (o: DiscoveryObservation): ContextRef => ({ sessionId: o.session_id, agentId: o.agent_id });

function writeState(s: ContextState): string {
  // Tools in order: the same events give the same state text, whatever the batching.
  const tools = [...s.listed.keys()].sort();
  return JSON.stringify({ last: s.last, listed: tools.map((tool) => [tool, ...(s.listed.get(tool) as Position)]) });
}

function readState(text: string | undefined): ContextState | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as { last: [string, string] | null; listed: [string, string, string][] };
    return { last: v.last, listed: new Map(v.listed.map(([tool, ts, id]) => [tool, [ts, id] as const])) };
  } catch {
    return undefined;
  }
}

/** Adds what the observations (chosen copies) say to a state: the last observation, the first listing of each tool. */
function advance(s: ContextState, observations: readonly DiscoveryObservation[]): ContextState {
  const out: ContextState = { last: s.last, listed: new Map(s.listed) };
  for (const o of observations) {
    const p = positionOf(o);
    if (out.last === null || earlier(out.last, p)) out.last = p;
    if (o.discovery_kind !== 'search') continue;
    for (const t of o.result_tools) {
      const had = out.listed.get(t);
      if (had === undefined || earlier(p, had)) out.listed.set(t, p);
    }
  }
  return out;
}

/** The ranks tool_calls gave the copies only it can rank (none in the common case: no lookup). */
async function versionsOf(store: Sink, observations: readonly DiscoveryObservation[]): Promise<Map<string, bigint> | undefined> {
  const toRank = copiesToRank(observations);
  return toRank.length > 0 && store.loadToolCallVersions ? copyVersions(await store.loadToolCallVersions(toRank)) : undefined;
}

/** True when `b` replaces stored copy `a` in a way only a whole derivation follows: another time, turn or kind, or a listing taken back. */
function movesOrTakesBack(a: DiscoveryObservation, b: DiscoveryObservation): boolean {
  if (a.ts !== b.ts || a.turn_id !== b.turn_id || a.discovery_kind !== b.discovery_kind) return true;
  if (a.discovery_kind !== 'search') return false;
  const now = new Set(b.result_tools);
  return a.result_tools.some((t) => !now.has(t));
}

/** The rows to write and the states to store for a batch's observations. */
export async function deriveDiscoveryRows(store: Sink, batch: readonly DiscoveryObservation[], computedAt: string): Promise<{ rows: DiscoveryEventRow[]; states: Map<string, string> }> {
  const rows: DiscoveryEventRow[] = [];
  const states = new Map<string, string>();
  const contexts = groupBy(batch, contextKey);
  if (contexts.size === 0) return { rows, states };
  const stored = await store.loadDerivationState(DERIVATION, [...contexts.keys()]);
  const whole: string[] = [];
  const parts = new Map<string, ContextState>();
  for (const k of contexts.keys()) {
    const s = readState(stored.get(k));
    if (s === undefined) whole.push(k);
    else parts.set(k, s);
  }

  if (parts.size > 0) {
    const inParts = batch.filter((o) => parts.has(contextKey(o)));
    const turns = new Map<string, ContextRef & { turnId: string }>();
    for (const o of inParts) turns.set(`${contextKey(o)}\u0000${o.turn_id}`, { ...refOf(o), turnId: o.turn_id });
    const loaded = await store.loadDiscoveryRows(
      inParts.map((o) => ({ ...refOf(o), eventId: o.event_id })),
      [...turns.values()],
    );
    const loadedByEvent = new Map<string, DiscoveryEventRow>();
    for (const r of loaded) loadedByEvent.set(eventKey(r), r);
    // Stored copies first: of two that say the same the stored one stays (copies.ts).
    const observations = [...loadedByEvent.values(), ...inParts];
    const versions = await versionsOf(store, observations);
    const chosen = groupBy(chooseCopies(observations, versions), contextKey);
    const flips: ToolSince[] = [];
    const listedNow = new Map<string, ContextState>();
    for (const [k, list] of chosen) {
      const s = parts.get(k) as ContextState;
      if (list.some((o) => { const a = loadedByEvent.get(eventKey(o)); return a !== undefined && a !== o && movesOrTakesBack(a, o); })) {
        whole.push(k);
        continue;
      }
      const next = advance(s, list);
      const derived = deriveDiscovery(list, computedAt, (tool, o) => {
        const p = next.listed.get(tool);
        return p !== undefined && earlier(p, positionOf(o));
      });
      for (const r of changedRows(derived, list.flatMap((o) => { const a = loadedByEvent.get(eventKey(o)); return a === undefined ? [] : [a]; }))) rows.push(r);
      // A tool now first listed before stored observations: its stored calls after that may turn to after_search.
      for (const [tool, p] of next.listed) {
        const had = s.listed.get(tool);
        if ((had === undefined || earlier(p, had)) && s.last !== null && earlier(p, s.last)) flips.push({ sessionId: list[0]?.session_id as string, agentId: list[0]?.agent_id as string, tool, since: p[0] });
      }
      listedNow.set(k, next);
      states.set(k, writeState(next));
    }
    const inBatch = new Set(rows.map(eventKey));
    for (const r of await store.loadDiscoveryCalls(flips)) {
      if (inBatch.has(eventKey(r)) || loadedByEvent.has(eventKey(r))) continue;
      const p = listedNow.get(contextKey(r))?.listed.get(r.called_tool);
      const after = p !== undefined && earlier(p, positionOf(r));
      if (Boolean(r.after_search) !== after) rows.push({ ...r, after_search: after, computed_at: computedAt });
    }
  }

  if (whole.length > 0) {
    // Every stored row of these contexts, then the batch's: the derivation before step 2.
    const refs = whole.map((k) => refOf((contexts.get(k) as DiscoveryObservation[])[0] as DiscoveryObservation));
    const storedRows = await store.loadDiscoveryObservations(refs);
    const wholeSet = new Set(whole);
    const observations = [...storedRows, ...batch.filter((o) => wholeSet.has(contextKey(o)))];
    const versions = await versionsOf(store, observations);
    for (const r of changedRows(deriveDiscoveryPerContext(observations, computedAt, versions), storedRows)) rows.push(r);
    for (const [k, list] of groupBy(chooseCopies(observations, versions), contextKey)) states.set(k, writeState(advance({ last: null, listed: new Map() }, list)));
  }
  return { rows, states };
}

/** The discovery derivation: the observations of a batch's tool calls are its input. */
export const discoveryDerivation: Derivation<DiscoveryObservation> = {
  name: 'discovery_events',
  select: (batch) => batch.discovery,
  async run(store, items, computedAt) {
    const { rows, states } = await deriveDiscoveryRows(store, items, computedAt);
    // The state before the rows: a run killed between the two derives the batch again on the
    // rerun from a state that already holds it, which gives the same rows (first listings are
    // minima, the last observation a maximum).
    await store.writeDerivationState(DERIVATION, states, computedAt);
    await store.writeDiscoveryEvents(rows);
    return { discoveryEvents: items.length };
  },
};
