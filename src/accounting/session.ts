// Per-session context accounting, the way agent runtimes decide to compact: after each observed
// usage the session's context is the observed figure; every tool output added afterwards adds
// its estimate (bytes/4, 765 per image). A breach is emitted when the context crosses the
// threshold (once per crossing: re-armed only when the session falls below again, e.g. after a
// compaction). Every figure carries its source: observed, estimated or observed+estimated.
import { idOf } from '../util/hash.ts';
import type { UsageRecord } from '../model/records.ts';
import type { ToolCallRow } from '../model/records.ts';
import type { BreachRow, FigureSource, TokenUsageRow } from '../model/usage.ts';
import { estimateImageTokens, estimateTokensFromBytes, exceedsThresholdWithHeadroom, saturatingAdd, usagePercentage } from './arithmetic.ts';
import type { ContentClass } from './content-class.ts';
import { normaliseContextTokens, USAGE_CONVENTIONS } from './conventions.ts';
import { ModelTable } from './models.ts';

/** What the accounting reads of a tool call: its identity and the size of its output. */
export type ToolOutput = Pick<ToolCallRow, 'event_id' | 'ts' | 'harness' | 'session_id' | 'agent_id' | 'host' | 'device_id' | 'turn_id' | 'model' | 'images' | 'output_bytes' | 'source'>;

/** What the accounting keeps of a tool-call row once the row is encoded for the sink (its large texts are not kept). */
export function toolOutputOf(r: ToolCallRow): ToolOutput {
  return { event_id: r.event_id, ts: r.ts, harness: r.harness, session_id: r.session_id, agent_id: r.agent_id, host: r.host, device_id: r.device_id, turn_id: r.turn_id, model: r.model, images: r.images, output_bytes: r.output_bytes, source: r.source };
}

export interface AccountingConfig {
  /** Breach threshold, percent of the context window (u8). */
  readonly thresholdPct: number;
  /** Headroom in tokens: moves the trigger point earlier by exactly this much. */
  readonly headroomTokens: bigint;
  readonly models: ModelTable;
  /** Contexts kept in memory between batches (default DEFAULT_MAX_CONTEXTS); idle ones are evicted. */
  readonly maxContexts?: number;
}

export const DEFAULT_ACCOUNTING: AccountingConfig = { thresholdPct: 85, headroomTokens: 0n, models: new ModelTable() };

/** What is known of a session between events; also what token_usage rows persist for a restart. */
export interface SessionState {
  contextTokens: bigint;
  contextSource: FigureSource;
  model: string;
  contextWindowTokens: bigint | null;
  aboveThreshold: boolean;
  /** Context after the last observed usage (the base the next observed input is compared to). */
  lastObservedContext: bigint | null;
  /** Estimates added since the last observed usage, and their content classes (drift). */
  estimatedSinceObserved: bigint;
  classesSinceObserved: ContentClass[];
  /** Rows written for the session so far: orders rows that share a timestamp. */
  seq: bigint;
}

/** The key of a context: a session's main agent, or one of its subagents (own window). */
export function contextKey(sessionId: string, agentId: string): string {
  return agentId === '' ? sessionId : `${sessionId}\u0000${agentId}`;
}

/** The key of one event in one context: what "already applied" is checked against. */
export function appliedKey(context: string, eventId: string): string {
  return `${context}\u0001${eventId}`;
}

/**
 * The figures of an observed usage, as the applied-event check compares them: a later copy of a
 * usage record with other figures (a streamed response logged again when it finished) is the
 * more complete copy and is applied; one with the same figures is a duplicate.
 */
export function usageFingerprint(u: Pick<UsageRecord, 'input_tokens' | 'output_tokens' | 'cache_read_tokens' | 'cache_write_tokens' | 'reasoning_tokens'>): string {
  const t = (v: bigint | null): string => (v === null ? '' : v.toString());
  return `${u.input_tokens}/${u.output_tokens}/${t(u.cache_read_tokens)}/${t(u.cache_write_tokens)}/${t(u.reasoning_tokens)}`;
}

/** Contexts kept in memory by default; the least recently used beyond this are evicted. */
export const DEFAULT_MAX_CONTEXTS = 20_000;

export function freshSessionState(): SessionState {
  return {
    contextTokens: 0n,
    contextSource: 'estimated',
    model: '',
    contextWindowTokens: null,
    aboveThreshold: false,
    lastObservedContext: null,
    estimatedSinceObserved: 0n,
    classesSinceObserved: [],
    seq: 0n,
  };
}

export interface AccountingResult {
  readonly usage?: TokenUsageRow;
  readonly breach?: BreachRow;
}

const text = (v: bigint | null): string | null => (v === null ? null : v.toString());

type RowBase = Pick<TokenUsageRow, 'event_id' | 'ts' | 'harness' | 'session_id' | 'agent_id' | 'host' | 'device_id' | 'turn_id' | 'model' | 'source' | 'request_id' | 'origin' | 'ingested_at'>;
type RowFigures = Partial<
  Pick<
    TokenUsageRow,
    | 'input_tokens' | 'output_tokens' | 'cache_read_tokens' | 'cache_write_tokens' | 'reasoning_tokens' | 'estimated_tokens'
    | 'content_class' | 'content_bytes' | 'drift_estimated_tokens' | 'drift_observed_tokens' | 'drift_content_class'
  >
>;

export class ContextAccountant {
  private readonly sessions = new Map<string, SessionState>();

  private readonly headroomText: string;

  constructor(readonly config: AccountingConfig = DEFAULT_ACCOUNTING) {
    this.headroomText = config.headroomTokens.toString();
  }

  /** True when the context (see contextKey) has been seen or restored in this process. */
  has(key: string): boolean {
    return this.sessions.has(key);
  }

  /** Installs a state rebuilt from storage (or a fresh one) for a context not yet seen. */
  restore(key: string, state: SessionState): void {
    this.sessions.set(key, state);
  }

  /** Contexts held in memory. */
  get size(): number {
    return this.sessions.size;
  }

  /** Marks a context as just used (the eviction order is least recently used first). */
  touch(key: string): void {
    const s = this.sessions.get(key);
    if (s === undefined) return;
    this.sessions.delete(key);
    this.sessions.set(key, s);
  }

  /**
   * Drops the least recently used contexts beyond `max`. Only safe when every row of theirs is
   * stored (between batches): an evicted context is rebuilt from token_usage when it returns.
   */
  evictTo(max: number): number {
    let evicted = 0;
    for (const key of this.sessions.keys()) {
      if (this.sessions.size <= max) break;
      this.sessions.delete(key);
      evicted++;
    }
    return evicted;
  }

  private state(sessionId: string, agentId: string): SessionState {
    const key = contextKey(sessionId, agentId);
    let s = this.sessions.get(key);
    if (!s) {
      s = freshSessionState();
      this.sessions.set(key, s);
    }
    return s;
  }

  /** The window for a model: the harness's own figure first, then the model table; null when unknown. */
  private windowFor(model: string, reported: bigint | null): bigint | null {
    if (reported !== null && reported > 0n) return reported;
    const w = this.config.models.contextWindow(model);
    return w === undefined ? null : BigInt(w);
  }

  /** Evaluates the threshold after the context changed; returns a breach on a crossing. */
  private evaluate(s: SessionState, e: Pick<BreachRow, 'session_id' | 'agent_id' | 'host' | 'device_id' | 'harness' | 'ts' | 'event_id'>, kind: BreachRow['event_kind'], ingestedAt: string): BreachRow | undefined {
    const { session_id: sessionId, agent_id: agentId, harness, ts, event_id: eventId } = e;
    const window = s.contextWindowTokens;
    const above = window !== null && exceedsThresholdWithHeadroom(s.contextTokens, window, this.config.thresholdPct, this.config.headroomTokens);
    const crossed = above && !s.aboveThreshold;
    s.aboveThreshold = above;
    if (!crossed || window === null) return undefined;
    return {
      breach_id: idOf(sessionId, agentId, eventId, String(this.config.thresholdPct), String(this.config.headroomTokens)),
      session_id: sessionId,
      agent_id: agentId,
      host: e.host,
      device_id: e.device_id,
      harness,
      ts,
      model: s.model,
      used_tokens: s.contextTokens.toString(),
      context_window_tokens: window.toString(),
      threshold_pct: this.config.thresholdPct,
      headroom_tokens: this.config.headroomTokens.toString(),
      usage_pct: usagePercentage(s.contextTokens, window),
      source: s.contextSource,
      event_id: eventId,
      event_kind: kind,
      ingested_at: ingestedAt,
    };
  }

  /**
   * A token_usage row with the session's state after the event. Written as one object literal:
   * spreading objects of this many keys costs tens of microseconds per row in V8.
   */
  private row(s: SessionState, base: RowBase, figures: RowFigures, flags: string[]): TokenUsageRow {
    s.seq++;
    const window = s.contextWindowTokens;
    return {
      event_id: base.event_id,
      ts: base.ts,
      harness: base.harness,
      session_id: base.session_id,
      agent_id: base.agent_id,
      host: base.host,
      device_id: base.device_id,
      turn_id: base.turn_id,
      model: base.model,
      source: base.source,
      request_id: base.request_id,
      input_tokens: figures.input_tokens ?? null,
      output_tokens: figures.output_tokens ?? null,
      cache_read_tokens: figures.cache_read_tokens ?? null,
      cache_write_tokens: figures.cache_write_tokens ?? null,
      reasoning_tokens: figures.reasoning_tokens ?? null,
      estimated_tokens: figures.estimated_tokens ?? null,
      content_class: figures.content_class ?? '',
      content_bytes: figures.content_bytes ?? '0',
      context_tokens: s.contextTokens.toString(),
      context_source: s.contextSource,
      context_window_tokens: text(window),
      usage_pct: window === null ? 0 : usagePercentage(s.contextTokens, window),
      above_threshold: s.aboveThreshold,
      threshold_pct: this.config.thresholdPct,
      headroom_tokens: this.headroomText,
      drift_estimated_tokens: figures.drift_estimated_tokens ?? null,
      drift_observed_tokens: figures.drift_observed_tokens ?? null,
      drift_content_class: figures.drift_content_class ?? '',
      last_observed_context: text(s.lastObservedContext),
      estimated_since_observed: s.estimatedSinceObserved.toString(),
      classes_since_observed: s.classesSinceObserved.slice(),
      session_seq: s.seq.toString(),
      flags,
      origin: base.origin,
      ingested_at: base.ingested_at,
    };
  }

  /** An observed usage: the session's context becomes the observed figure. */
  onUsage(u: UsageRecord, ingestedAt: string): AccountingResult {
    const s = this.state(u.session_id, u.agent_id);
    const { inputTotal, contextTokens } = normaliseContextTokens(u.harness, {
      inputTokens: u.input_tokens,
      outputTokens: u.output_tokens,
      cacheReadTokens: u.cache_read_tokens ?? 0n,
      cacheWriteTokens: u.cache_write_tokens ?? 0n,
      reasoningTokens: u.reasoning_tokens ?? 0n,
    });
    // Drift: what the estimates since the last observed request predicted the next request's
    // input would grow by, against what it really grew by. A shrink is a compaction: no drift.
    let driftEstimated: bigint | null = null;
    let driftObserved: bigint | null = null;
    let driftClass = '';
    if (s.lastObservedContext !== null && s.estimatedSinceObserved > 0n && inputTotal > s.lastObservedContext) {
      driftEstimated = s.estimatedSinceObserved;
      driftObserved = inputTotal - s.lastObservedContext;
      const classes = new Set(s.classesSinceObserved);
      driftClass = classes.size === 1 ? [...classes][0] ?? 'mixed' : 'mixed';
    }
    s.model = u.model;
    s.contextWindowTokens = this.windowFor(u.model, u.context_window_tokens);
    s.contextTokens = contextTokens;
    s.contextSource = 'observed';
    s.lastObservedContext = contextTokens;
    s.estimatedSinceObserved = 0n;
    s.classesSinceObserved = [];
    const breach = this.evaluate(s, u, 'usage', ingestedAt);
    // A harness that logs rounded figures (Aider): the row says so.
    const flags = [...(s.contextWindowTokens === null ? ['unknown_model_window'] : []), ...(USAGE_CONVENTIONS[u.harness].approximate ? ['approximate'] : [])];
    const usage = this.row(
      s,
      { event_id: u.event_id, ts: u.ts, harness: u.harness, session_id: u.session_id, agent_id: u.agent_id, host: u.host, device_id: u.device_id, turn_id: u.turn_id, model: u.model, source: 'observed', request_id: u.request_id, origin: u.source, ingested_at: ingestedAt },
      {
        input_tokens: u.input_tokens.toString(),
        output_tokens: u.output_tokens.toString(),
        cache_read_tokens: text(u.cache_read_tokens),
        cache_write_tokens: text(u.cache_write_tokens),
        reasoning_tokens: text(u.reasoning_tokens),
        drift_estimated_tokens: text(driftEstimated),
        drift_observed_tokens: text(driftObserved),
        drift_content_class: driftClass,
      },
      flags,
    );
    return breach ? { usage, breach } : { usage };
  }

  /** A tool output appended to the context: adds its estimate. Nothing to add, nothing written. */
  onToolOutput(r: ToolOutput, outputClass: ContentClass, ingestedAt: string): AccountingResult {
    if (r.output_bytes === 0 && r.images === 0) return {};
    const estimated = BigInt(estimateTokensFromBytes(r.output_bytes) + estimateImageTokens(r.images));
    const s = this.state(r.session_id, r.agent_id);
    if (s.model === '') s.model = r.model;
    if (s.contextWindowTokens === null) s.contextWindowTokens = this.windowFor(s.model, null);
    s.contextTokens = saturatingAdd(s.contextTokens, estimated);
    s.contextSource = s.lastObservedContext === null ? 'estimated' : 'observed+estimated';
    s.estimatedSinceObserved = saturatingAdd(s.estimatedSinceObserved, estimated);
    const cls: ContentClass = r.images > 0 && r.output_bytes === 0 ? 'mixed' : outputClass;
    if (!s.classesSinceObserved.includes(cls)) s.classesSinceObserved.push(cls);
    const breach = this.evaluate(s, r, 'tool_output', ingestedAt);
    const flags = s.contextWindowTokens === null ? ['unknown_model_window'] : [];
    const usage = this.row(
      s,
      { event_id: r.event_id, ts: r.ts, harness: r.harness, session_id: r.session_id, agent_id: r.agent_id, host: r.host, device_id: r.device_id, turn_id: r.turn_id, model: r.model, source: 'estimated', request_id: '', origin: r.source, ingested_at: ingestedAt },
      { estimated_tokens: estimated.toString(), content_class: cls, content_bytes: String(r.output_bytes) },
      flags,
    );
    return breach ? { usage, breach } : { usage };
  }
}
