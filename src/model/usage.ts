// Row contracts of the accounting tables (token_usage, threshold_breaches): what the accountant
// produces and the sink stores. 64-bit figures as decimal text, so they stay exact.

export type FigureSource = 'observed' | 'estimated' | 'observed+estimated';

/** One row of token_usage: an observed request or an estimate, side by side. u64 as decimal text. */
export interface TokenUsageRow {
  event_id: string;
  ts: string;
  harness: string;
  session_id: string;
  agent_id: string;
  /** The machine of the event the row accounts for ('' when unknown). */
  host: string;
  device_id: string;
  turn_id: string;
  model: string;
  source: 'observed' | 'estimated';
  request_id: string;
  input_tokens: string | null;
  output_tokens: string | null;
  cache_read_tokens: string | null;
  cache_write_tokens: string | null;
  reasoning_tokens: string | null;
  estimated_tokens: string | null;
  content_class: string;
  content_bytes: string;
  context_tokens: string;
  context_source: FigureSource;
  context_window_tokens: string | null;
  usage_pct: number;
  above_threshold: boolean;
  threshold_pct: number;
  headroom_tokens: string;
  drift_estimated_tokens: string | null;
  drift_observed_tokens: string | null;
  drift_content_class: string;
  last_observed_context: string | null;
  estimated_since_observed: string;
  classes_since_observed: string[];
  session_seq: string;
  flags: string[];
  origin: string;
  ingested_at: string;
}

export interface BreachRow {
  breach_id: string;
  session_id: string;
  agent_id: string;
  /** The machine of the event that crossed the threshold. */
  host: string;
  device_id: string;
  harness: string;
  ts: string;
  model: string;
  used_tokens: string;
  context_window_tokens: string;
  threshold_pct: number;
  headroom_tokens: string;
  usage_pct: number;
  source: FigureSource;
  event_id: string;
  event_kind: 'usage' | 'tool_output';
  ingested_at: string;
}
