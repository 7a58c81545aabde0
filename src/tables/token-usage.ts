// The token_usage table: Observed usage and bytes/4 estimates per context (SPEC §5): the context after each record, its share of the window, threshold and headroom, drift.
import type { TokenUsageRow } from '../model/usage.ts';
import { defineTable } from './table.ts';

/**
 * The aggregates of the projection `heads` (migration 15): per accounting context (session_id,
 * agent_id), its highest sequence and where its row of the highest (sequence, time, ingestion)
 * is. A query names them exactly as here for the engine to answer it from the projection
 * (ClickHouseSink.latestUsage).
 */
export const TOKEN_USAGE_HEADS = {
  seq: 'max(session_seq)',
  at: 'argMax(tuple(source, event_id), tuple(session_seq, ts, ingested_at))',
} as const;

export const tokenUsage = defineTable<TokenUsageRow>()({
  name: 'token_usage',
  columns: {
    event_id: 'String',
    ts: "DateTime64(3, 'UTC')",
    harness: 'LowCardinality(String)',
    session_id: 'String',
    agent_id: "String DEFAULT ''",
    host: "LowCardinality(String) DEFAULT ''",
    device_id: "LowCardinality(String) DEFAULT ''",
    turn_id: 'String',
    model: 'LowCardinality(String)',
    source: 'LowCardinality(String)',
    request_id: 'String',
    input_tokens: 'Nullable(UInt64)',
    output_tokens: 'Nullable(UInt64)',
    cache_read_tokens: 'Nullable(UInt64)',
    cache_write_tokens: 'Nullable(UInt64)',
    reasoning_tokens: 'Nullable(UInt64)',
    estimated_tokens: 'Nullable(UInt64)',
    content_class: 'LowCardinality(String)',
    content_bytes: 'UInt64',
    context_tokens: 'UInt64',
    context_source: 'LowCardinality(String)',
    context_window_tokens: 'Nullable(UInt64)',
    usage_pct: 'Float64',
    above_threshold: 'Bool',
    threshold_pct: 'UInt8',
    headroom_tokens: 'UInt64',
    drift_estimated_tokens: 'Nullable(UInt64)',
    drift_observed_tokens: 'Nullable(UInt64)',
    drift_content_class: 'LowCardinality(String)',
    last_observed_context: 'Nullable(UInt64)',
    estimated_since_observed: 'UInt64',
    classes_since_observed: 'Array(LowCardinality(String))',
    session_seq: 'UInt64',
    flags: 'Array(LowCardinality(String))',
    origin: 'String',
    ingested_at: "DateTime64(3, 'UTC')",
  },
  engine: 'ReplacingMergeTree(ingested_at)',
  partitionBy: 'toYYYYMM(ts)',
  orderBy: '(session_id, source, event_id)',
  // Each accounting context's highest sequence and where its row is (migration 15): the
  // accounting restores a context by key (ClickHouseSink.latestUsage), whatever its history.
  projections: [`PROJECTION heads (SELECT session_id, agent_id, ${TOKEN_USAGE_HEADS.seq}, ${TOKEN_USAGE_HEADS.at} GROUP BY session_id, agent_id)`],
  retention: 'ts',
  scope: 'event',
  dumpSelect: '* EXCEPT (origin, ingested_at)',
});
