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

/** Counts of what is stored, deduplicated: what a replay summary is checked against. */
export const STORED_COUNTS_SQL = `SELECT
  (SELECT count() FROM tool_calls FINAL) AS tool_calls,
  (SELECT count() FROM dead_letters FINAL) AS dead_letters`;

export const DEAD_LETTERS_REPORT_SQL = `SELECT reason, count() AS dead_letters, sum(raw_bytes) AS raw_bytes, any(source) AS example_source, any(detail) AS example_detail
  FROM dead_letters FINAL GROUP BY reason ORDER BY dead_letters DESC, reason`;
