// The accounting's state between batches and processes, through a SessionStore (the sink's
// token_usage rows): a context this process does not hold is rebuilt from its latest row, and an
// event already applied (by this process or another) is recognised by its id.
import type { ContextRef, SessionStore, StoredContext } from '../model/sink.ts';
import type { ContentClass } from './content-class.ts';
import { appliedKey, contextKey, type SessionState } from './session.ts';

/** The state a stored row persists (see SessionState), its 64-bit figures back to BigInt. */
export function stateOf(r: StoredContext): SessionState {
  return {
    contextTokens: BigInt(r.context_tokens),
    contextSource: r.context_source,
    model: r.model,
    contextWindowTokens: r.context_window_tokens === null ? null : BigInt(r.context_window_tokens),
    aboveThreshold: r.above_threshold,
    lastObservedContext: r.last_observed_context === null ? null : BigInt(r.last_observed_context),
    estimatedSinceObserved: BigInt(r.estimated_since_observed),
    // A copy: the state grows its list, the stored row keeps its own (the memory store hands out its rows).
    classesSinceObserved: [...r.classes_since_observed] as ContentClass[],
    seq: BigInt(r.session_seq),
  };
}

/**
 * The stored state of each wanted context, under the caller's key; a context with no stored
 * row is absent (it starts fresh). Events already applied are skipped (appliedFigures), so a
 * redelivered or replayed event adds nothing and a new one continues from there.
 */
export async function restoreStates(store: SessionStore, wanted: ReadonlyMap<string, ContextRef>): Promise<Map<string, SessionState>> {
  const out = new Map<string, SessionState>();
  if (wanted.size === 0) return out;
  const callerKey = new Map([...wanted].map(([k, c]) => [contextKey(c.sessionId, c.agentId), k]));
  for (const r of await store.latestUsage([...wanted.values()])) {
    const key = callerKey.get(contextKey(r.session_id, r.agent_id));
    if (key !== undefined) out.set(key, stateOf(r));
  }
  return out;
}

/**
 * Which of these events were already applied, as appliedKey(contextKey, event_id) -> the stored
 * figures of an observed usage (usageFingerprint), '' for an estimate.
 */
export async function appliedFigures(store: SessionStore, events: readonly (ContextRef & { readonly eventId: string })[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (events.length === 0) return out;
  for (const r of await store.appliedEvents(events)) out.set(appliedKey(contextKey(r.session_id, r.agent_id), r.event_id), r.figures);
  return out;
}
