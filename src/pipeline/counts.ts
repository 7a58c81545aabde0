// What a pipeline run counts (the summary a command prints): apart from the batch writer, so that
// a command that writes nothing can say so without loading it.
import type { DeadLetterReason, RowFlag } from '../model/records.ts';

export interface PipelineCounts {
  eventsRead: number;
  /** Input events stored as rows: tool calls plus observed usage events. */
  rowsWritten: number;
  toolCallRows: number;
  usageRows: number;
  /** MCP lifecycle events (mcp_status, mcp_tools, mcp_tools_changed) stored in mcp_events. */
  mcpEventRows: number;
  deadLetters: number;
  deadLettersByReason: Partial<Record<DeadLetterReason, number>>;
  flaggedRows: Partial<Record<RowFlag, number>>;
  /** Derived rows (not input events): estimates of tool outputs and threshold breaches. */
  estimateRows: number;
  breaches: number;
  /**
   * Events whose id was already applied to the token accounting of their context (a redelivery,
   * a producer retry, an overlapping replay): stored again (deduplicated by id), counted once.
   */
  duplicatesSkipped: number;
  /** Idle session contexts dropped from memory (rebuilt from token_usage when they return). */
  contextsEvicted: number;
  /** Tools registered by the stored tools/list snapshots (mcp_tool_registrations rows). */
  mcpToolRegistrations: number;
  /** Coalesced server-state rows of the servers seen (mcp_server_state, latest derivation). */
  mcpServerStateRows: number;
  /** Tool calls that are discovery events (searches, not-in-active-set refusals, MCP calls). */
  discoveryEvents: number;
  /** Secrets replaced by redaction markers in what was written (rows, dead letters, MCP events). */
  secretsRedacted: number;
  blankLines: number;
  bytesRead: number;
}

export function emptyCounts(): PipelineCounts {
  return {
    eventsRead: 0,
    rowsWritten: 0,
    toolCallRows: 0,
    usageRows: 0,
    mcpEventRows: 0,
    deadLetters: 0,
    deadLettersByReason: {},
    flaggedRows: {},
    estimateRows: 0,
    breaches: 0,
    duplicatesSkipped: 0,
    contextsEvicted: 0,
    mcpToolRegistrations: 0,
    mcpServerStateRows: 0,
    discoveryEvents: 0,
    secretsRedacted: 0,
    blankLines: 0,
    bytesRead: 0,
  };
}

