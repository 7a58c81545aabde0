// Which copy of a tool call the discovery rows are derived from, and which derived rows differ
// from what is stored. One call can arrive more than once with one event id: first pending (a
// transcript or rollout still being written), later finished; or finished from two sources.
// The copy kept ranks as tool_calls ranks its copies (src/sink/ddl.ts, migration 10's
// row_version): a finished copy outranks a pending one; between finished copies the one with
// more bytes of input and output, then the later ingestion. A copy that says the same as the
// one kept (every field but when and from where it was ingested) changes nothing: the kept copy
// stays, so a second replay of the same files writes no discovery row.
import type { DiscoveryEventRow, DiscoveryObservation } from '../model/mcp.ts';
import type { ToolCallCopyVersion, ToolCallRef } from '../model/sink.ts';

/** The fields of an observation that say what the call was (not when or from where it was ingested). */
const CONTENT_FIELDS = [
  'event_id', 'ts', 'harness', 'session_id', 'agent_id', 'host', 'device_id', 'turn_id', 'model', 'discovery_kind', 'tool_name', 'status',
  'query', 'result_tools', 'reported_budget_exhausted', 'refused_tool', 'recovery_query', 'called_tool',
] as const satisfies readonly (keyof DiscoveryObservation)[];

/** Every field of a derived row but its version (computed_at). */
const ROW_FIELDS = [
  ...CONTENT_FIELDS, 'source', 'ingested_at', 'turn_search_seq', 'budget_refusal', 'recovery_searched', 'recovered', 'after_search', 'flags',
] as const satisfies readonly (keyof DiscoveryEventRow)[];

// Compile-time checks that the lists name every field (but the ingestion's and the version).
type Missing<T, L extends readonly (keyof T)[]> = [Exclude<keyof T, L[number]>] extends [never] ? true : never;
const listsComplete: [Missing<Omit<DiscoveryObservation, 'source' | 'ingested_at'>, typeof CONTENT_FIELDS>, Missing<Omit<DiscoveryEventRow, 'computed_at'>, typeof ROW_FIELDS>] = [true, true];
void listsComplete;

/** The key of one copy: the event and where and when this copy was ingested. */
function copyKey(o: { readonly session_id: string; readonly event_id: string; readonly status: string; readonly source: string; readonly ingested_at: string }): string {
  return `${o.session_id}\u0000${o.event_id}\u0000${o.status}\u0000${o.source}\u0000${o.ingested_at}`;
}

/** The rank of each stored tool-call copy, by copy (the highest when one copy was stored twice). */
export function copyVersions(rows: readonly ToolCallCopyVersion[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const r of rows) {
    const k = copyKey(r);
    const v = BigInt(r.row_version);
    const had = out.get(k);
    if (had === undefined || v > had) out.set(k, v);
  }
  return out;
}

const eventKey = (o: DiscoveryObservation): string => `${o.session_id}\u0000${o.agent_id}\u0000${o.event_id}`;
const finished = (o: DiscoveryObservation): boolean => o.status !== 'pending';

/** Field values compared as stored and as derived (an engine may give a Bool as 0/1, a number as text). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  return scalar(a) === scalar(b);
}

function scalar(v: unknown): string {
  if (v === true) return '1';
  if (v === false) return '0';
  return String(v);
}

/** True when two copies say the same of the call (they differ at most in source and ingestion time). */
export function sameContent(a: DiscoveryObservation, b: DiscoveryObservation): boolean {
  for (const f of CONTENT_FIELDS) if (!sameValue(a[f], b[f])) return false;
  return true;
}

/**
 * True when the challenger `b` replaces the copy kept so far `a` (given earlier: stored copies
 * are given before new ones). `versions`: the ranks tool_calls gave the copies, when known.
 */
function outranks(b: DiscoveryObservation, a: DiscoveryObservation, versions: ReadonlyMap<string, bigint> | undefined): boolean {
  if (finished(a) !== finished(b)) return finished(b);
  if (sameContent(a, b)) return false;
  const va = versions?.get(copyKey(a));
  const vb = versions?.get(copyKey(b));
  // Equal ranks: the copy written later, as the table keeps the last inserted of equal versions.
  if (va !== undefined && vb !== undefined) return vb >= va;
  // One copy that tool_calls does not hold: it did not keep it (a store that writes no copy a
  // stored one outranks), or no longer holds it; the copy it holds wins.
  if (va !== undefined || vb !== undefined) return vb !== undefined;
  // No rank known (a store that cannot tell): the later ingestion.
  return b.ingested_at >= a.ingested_at;
}

/**
 * One copy per event (session, agent, event id) of the given observations, in the order first
 * seen: the copy that ranks highest (see above). Stored copies must be given first.
 */
export function chooseCopies<T extends DiscoveryObservation>(observations: readonly T[], versions?: ReadonlyMap<string, bigint>): T[] {
  const kept = new Map<string, T>();
  for (const o of observations) {
    const k = eventKey(o);
    const a = kept.get(k);
    if (a === undefined || outranks(o, a, versions)) kept.set(k, o);
  }
  return [...kept.values()];
}

/**
 * The events whose copies only tool_calls can rank: two finished copies that say different
 * things (bytes of input and output decide, which an observation does not keep). Empty in the
 * common case (a first sighting, or the same copy again), so no lookup is made.
 */
export function copiesToRank(observations: readonly DiscoveryObservation[]): ToolCallRef[] {
  const first = new Map<string, DiscoveryObservation>();
  const out = new Map<string, ToolCallRef>();
  for (const o of observations) {
    if (!finished(o)) continue;
    const k = eventKey(o);
    const a = first.get(k);
    if (a === undefined) first.set(k, o);
    else if (!out.has(k) && !sameContent(a, o)) out.set(k, { harness: o.harness, sessionId: o.session_id, eventId: o.event_id });
  }
  return [...out.values()];
}

/**
 * The derived rows that differ from the stored row of the same event in any field but the
 * version (computed_at): only those need writing. A row that is stored as derived is not written
 * again, so plain SQL over the table counts it once.
 */
export function changedRows(derived: readonly DiscoveryEventRow[], stored: readonly DiscoveryEventRow[]): DiscoveryEventRow[] {
  const byEvent = new Map<string, DiscoveryEventRow>();
  for (const s of stored) byEvent.set(eventKey(s), s);
  return derived.filter((r) => {
    const s = byEvent.get(eventKey(r));
    if (s === undefined) return true;
    for (const f of ROW_FIELDS) if (!sameValue(r[f], s[f])) return true;
    return false;
  });
}
