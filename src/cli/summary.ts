// The summary every writing command prints (replay, import, consume): one list of what the
// pipeline stored, under the same metric names everywhere. Each command puts its own intake
// figures before it (events_read, records_read, events_consumed…) and its own after it.
import type { PipelineCounts } from '../pipeline/batch-writer.ts';
import type { Row } from './format.ts';

/** What was stored and skipped, from the pipeline's counts: the same names for every command. */
export function storedRows(counts: PipelineCounts): Row[] {
  const rows: Row[] = [
    { metric: 'rows_written', value: counts.rowsWritten },
    { metric: 'rows_written.tool_calls', value: counts.toolCallRows },
    { metric: 'rows_written.usage', value: counts.usageRows },
    { metric: 'rows_written.mcp_events', value: counts.mcpEventRows },
    { metric: 'dead_letters', value: counts.deadLetters },
  ];
  for (const [reason, n] of Object.entries(counts.deadLettersByReason)) rows.push({ metric: `dead_letters.${reason}`, value: n });
  for (const [flag, n] of Object.entries(counts.flaggedRows)) rows.push({ metric: `flagged_rows.${flag}`, value: n });
  rows.push(
    { metric: 'estimates_written', value: counts.estimateRows },
    { metric: 'threshold_breaches', value: counts.breaches },
    { metric: 'duplicates_skipped', value: counts.duplicatesSkipped },
    { metric: 'secrets_redacted', value: counts.secretsRedacted },
    { metric: 'mcp_tool_registrations', value: counts.mcpToolRegistrations },
    { metric: 'mcp_server_state_rows', value: counts.mcpServerStateRows },
    { metric: 'discovery_events', value: counts.discoveryEvents },
    { metric: 'contexts_evicted', value: counts.contextsEvicted },
  );
  return rows;
}

/** elapsed_ms and events_per_s over `events` (what the command took in). */
export function rateRows(events: number, elapsedMs: number): Row[] {
  return [
    { metric: 'elapsed_ms', value: Math.round(elapsedMs) },
    { metric: 'events_per_s', value: elapsedMs > 0 ? Math.round((events * 1000) / elapsedMs) : 0 },
  ];
}
