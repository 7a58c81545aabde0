// The threshold_breaches table: One row per context crossing its threshold (SPEC §5: used >= threshold share of the window).
import type { BreachRow } from '../model/usage.ts';
import { defineTable } from './table.ts';

export const thresholdBreaches = defineTable<BreachRow>()({
  name: 'threshold_breaches',
  columns: {
    breach_id: 'String',
    session_id: 'String',
    agent_id: "String DEFAULT ''",
    host: "LowCardinality(String) DEFAULT ''",
    device_id: "LowCardinality(String) DEFAULT ''",
    harness: 'LowCardinality(String)',
    ts: "DateTime64(3, 'UTC')",
    model: 'LowCardinality(String)',
    used_tokens: 'UInt64',
    context_window_tokens: 'UInt64',
    threshold_pct: 'UInt8',
    headroom_tokens: 'UInt64',
    usage_pct: 'Float64',
    source: 'LowCardinality(String)',
    event_id: 'String',
    event_kind: 'LowCardinality(String)',
    ingested_at: "DateTime64(3, 'UTC')",
  },
  engine: 'ReplacingMergeTree(ingested_at)',
  partitionBy: 'toYYYYMM(ts)',
  orderBy: '(harness, session_id, breach_id)',
  retention: 'ts',
  scope: 'event',
  dumpSelect: '* EXCEPT (ingested_at)',
});
