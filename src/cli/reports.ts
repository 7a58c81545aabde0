// Reports over the analytics tables. Each reads deduplicated data (FINAL), so a replayed input
// never doubles a figure.

export const TOOL_REPORT_GROUPINGS = ['tool', 'namespace', 'kind'] as const;
export type ToolReportGrouping = (typeof TOOL_REPORT_GROUPINGS)[number];

/** Calls per namespace / kind / tool, with errors, MCP and read-only shares. */
export function toolsReportSql(by: ToolReportGrouping): string {
  const keys = { tool: ['namespace', 'kind', 'tool_name'], namespace: ['namespace'], kind: ['kind'] }[by];
  return `SELECT ${keys.join(', ')},
    count() AS calls,
    countIf(status = 'error') AS errors,
    round(errors / calls, 4) AS error_share,
    countIf(read_only) AS read_only_calls,
    round(read_only_calls / calls, 4) AS read_only_share,
    countIf(via = 'use_tool') AS via_use_tool,
    countIf(length(flags) > 0) AS flagged,
    sum(input_bytes) AS input_bytes,
    sum(output_bytes) AS output_bytes
  FROM tool_calls FINAL
  GROUP BY ${keys.join(', ')}
  ORDER BY calls DESC, ${keys.join(', ')}`;
}

export const DEAD_LETTERS_REPORT_SQL = `SELECT reason, count() AS dead_letters, sum(raw_bytes) AS raw_bytes, any(source) AS example_source, any(detail) AS example_detail
  FROM dead_letters FINAL GROUP BY reason ORDER BY dead_letters DESC, reason`;

/** Observed tokens per harness, model and day, by kind, beside the estimates of the same group. */
export const USAGE_REPORT_SQL = `SELECT harness, model, toDate(ts) AS day,
    countIf(source = 'observed') AS requests,
    sumIf(input_tokens, source = 'observed') AS input_tokens,
    sumIf(cache_read_tokens, source = 'observed') AS cache_read_tokens,
    sumIf(cache_write_tokens, source = 'observed') AS cache_write_tokens,
    sumIf(output_tokens, source = 'observed') AS output_tokens,
    sumIf(reasoning_tokens, source = 'observed') AS reasoning_tokens,
    countIf(source = 'estimated') AS estimates,
    sumIf(estimated_tokens, source = 'estimated') AS estimated_tool_output_tokens,
    uniqExact(session_id) AS sessions
  FROM token_usage FINAL
  GROUP BY harness, model, day
  ORDER BY day, harness, model`;

/** Sessions that crossed the threshold: when, at what figure and percentage, from which source. */
export const BREACHES_REPORT_SQL = `SELECT session_id, harness, model, ts, used_tokens, context_window_tokens,
    round(usage_pct, 2) AS usage_pct, threshold_pct, headroom_tokens, source, event_kind, event_id
  FROM threshold_breaches FINAL
  ORDER BY ts, session_id`;

/**
 * Estimate vs observation for the same content: between two observed requests of a session,
 * the tool outputs' estimates against what the next request's input really grew by.
 */
export const DRIFT_REPORT_SQL = `SELECT harness, model, drift_content_class AS content_class,
    count() AS intervals,
    sum(drift_estimated_tokens) AS estimated_tokens,
    sum(drift_observed_tokens) AS observed_tokens,
    round(estimated_tokens / observed_tokens, 4) AS ratio,
    round((toInt64(estimated_tokens) - toInt64(observed_tokens)) / observed_tokens * 100, 2) AS error_pct,
    round(avg(abs(toInt64(drift_estimated_tokens) - toInt64(drift_observed_tokens)) / drift_observed_tokens) * 100, 2) AS mean_abs_error_pct
  FROM token_usage FINAL
  WHERE drift_observed_tokens IS NOT NULL
  GROUP BY harness, model, content_class
  ORDER BY harness, model, content_class`;
