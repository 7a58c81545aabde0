// The accounting as a derivation (token_usage, threshold_breaches): each tool output and usage
// event of a batch, in arrival order, applied once per context (session, agent) to the context's
// state; contexts this process does not hold are first rebuilt from their latest token_usage row
// (the last state per key), and an event already applied, by this process or another, is
// recognised by its stored row and skipped (a redelivery, a producer retry, an overlapping
// replay add nothing). The states live in memory between batches, idle ones beyond maxContexts
// evicted (every row of theirs is stored by then).
import {
  ContextAccountant,
  appliedKey,
  contextKey,
  DEFAULT_ACCOUNTING,
  DEFAULT_MAX_CONTEXTS,
  usageFingerprint,
  freshSessionState,
  type AccountingConfig,
  type AccountingResult,
  type ToolOutput,
} from '../accounting/session.ts';
import { appliedFigures, restoreStates } from '../accounting/restore.ts';
import type { ContentClass } from '../accounting/content-class.ts';
import type { UsageRecord } from '../model/records.ts';
import type { ContextRef, Sink } from '../model/sink.ts';
import type { BreachRow, TokenUsageRow } from '../model/usage.ts';
import type { BatchEvents, Derivation, DerivedCounts } from './stage.ts';

/** A batch's event as the accounting reads it: a tool call's output, a usage record, or another kind (passed over). */
export type AccountedEvent =
  | { readonly kind: 'row'; readonly call: ToolOutput; readonly outputClass: ContentClass; readonly ingestedAt: string }
  | { readonly kind: 'usage'; readonly usage: UsageRecord }
  | { readonly kind: 'mcp' | 'dead' };

interface Derived {
  readonly tokenUsage: TokenUsageRow[];
  readonly breaches: BreachRow[];
  readonly duplicatesSkipped: number;
  readonly contextsEvicted: number;
}

/**
 * The event an outcome applies to the accounting: every usage, and a tool call whose output adds
 * something to the context (one with neither bytes nor images adds nothing and writes no row).
 */
function accountable(o: AccountedEvent): { readonly session_id: string; readonly agent_id: string; readonly event_id: string } | undefined {
  if (o.kind === 'usage') return o.usage;
  if (o.kind === 'row' && (o.call.output_bytes > 0 || o.call.images > 0)) return o.call;
  return undefined;
}

/** One per batch writer: it holds the contexts' states between batches. */
export class AccountingDerivation implements Derivation<AccountedEvent> {
  readonly name = 'token_usage';
  private readonly accountant: ContextAccountant;
  private readonly maxContexts: number;
  /**
   * What each batch derived, kept while the batch is (its events' array): a batch written again
   * after a failure writes the same rows, since the states have already moved past it.
   */
  private readonly derived = new WeakMap<readonly AccountedEvent[], Derived>();

  constructor(config: AccountingConfig = DEFAULT_ACCOUNTING) {
    this.accountant = new ContextAccountant(config);
    this.maxContexts = config.maxContexts ?? DEFAULT_MAX_CONTEXTS;
  }

  select(batch: BatchEvents): readonly AccountedEvent[] {
    return batch.events;
  }

  async run(store: Sink, events: readonly AccountedEvent[], _computedAt: string): Promise<DerivedCounts> {
    let d = this.derived.get(events);
    if (d === undefined) {
      d = await this.derive(store, events);
      this.derived.set(events, d);
    }
    // Breaches before token_usage: a token_usage row marks its event applied, so a process
    // killed between the two inserts must not leave an applied event whose breach was never
    // written (a rerun skips applied events); written first, a rerun writes the same breach
    // (same id) again, stored once. The inserts run one after another: on 2 cores, running them
    // at once was slower (15,463 vs 17,492 events/s, bench/replay.ts-like 100 k events, quiet).
    await store.writeBreaches(d.breaches);
    await store.writeTokenUsage(d.tokenUsage);
    let estimateRows = 0;
    for (const r of d.tokenUsage) if (r.source === 'estimated') estimateRows++;
    return { estimateRows, breaches: d.breaches.length, duplicatesSkipped: d.duplicatesSkipped, contextsEvicted: d.contextsEvicted };
  }

  /**
   * Runs the accounting over a batch, in arrival order, applying each event once per context:
   * an event already applied (its token_usage row is stored, by this process or another, or it
   * came earlier in this batch) is skipped and counted as a duplicate. Contexts this process
   * does not hold are first rebuilt from their latest token_usage row, so a restarted worker
   * neither forgets a session nor breaches twice for one crossing. Idle contexts beyond
   * maxContexts are evicted first.
   */
  private async derive(store: Sink, outcomes: readonly AccountedEvent[]): Promise<Derived> {
    const contextsEvicted = this.accountant.evictTo(this.maxContexts);
    const unseen = new Map<string, ContextRef>();
    const inBatch = new Set<string>();
    for (const o of outcomes) {
      const e = o.kind === 'row' ? o.call : o.kind === 'usage' ? o.usage : undefined;
      if (!e) continue;
      const key = contextKey(e.session_id, e.agent_id);
      if (inBatch.has(key)) continue;
      inBatch.add(key);
      if (this.accountant.has(key)) this.accountant.touch(key);
      else unseen.set(key, { sessionId: e.session_id, agentId: e.agent_id });
    }
    const restored = await restoreStates(store, unseen);
    for (const key of unseen.keys()) this.accountant.restore(key, restored.get(key) ?? freshSessionState());
    // A context with no stored row has applied nothing yet: only the others need the lookup.
    const lookup: { sessionId: string; agentId: string; eventId: string }[] = [];
    for (const o of outcomes) {
      const e = accountable(o);
      if (!e) continue;
      const key = contextKey(e.session_id, e.agent_id);
      if (unseen.has(key) && !restored.has(key)) continue;
      lookup.push({ sessionId: e.session_id, agentId: e.agent_id, eventId: e.event_id });
    }
    const applied = await appliedFigures(store, lookup);
    let duplicatesSkipped = 0;
    /**
     * True (and counted) when the event was already applied: any earlier copy of a tool output
     * (estimates add up), a copy of a usage with the same figures (a usage whose figures changed
     * is the more complete copy: applied, it sets the context to the new figure). Otherwise the
     * event is marked applied.
     */
    const isDuplicate = (sessionId: string, agentId: string, eventId: string, figures: string): boolean => {
      const k = appliedKey(contextKey(sessionId, agentId), eventId);
      const stored = applied.get(k);
      if (stored !== undefined && (figures === '' || stored === figures)) {
        duplicatesSkipped++;
        return true;
      }
      applied.set(k, figures);
      return false;
    };

    const tokenUsage: TokenUsageRow[] = [];
    const breaches: BreachRow[] = [];
    for (const o of outcomes) {
      let result: AccountingResult = {};
      if (o.kind === 'row') {
        const c = accountable(o);
        if (c && !isDuplicate(c.session_id, c.agent_id, c.event_id, '')) result = this.accountant.onToolOutput(o.call, o.outputClass, o.ingestedAt);
      } else if (o.kind === 'usage') {
        const u = o.usage;
        if (!isDuplicate(u.session_id, u.agent_id, u.event_id, usageFingerprint(u))) result = this.accountant.onUsage(u, u.ingested_at);
      }
      if (result.usage) tokenUsage.push(result.usage);
      if (result.breach) breaches.push(result.breach);
    }
    return { tokenUsage, breaches, duplicatesSkipped, contextsEvicted };
  }
}
