// The mcp_events table: MCP lifecycle events as received (mcp_status, mcp_tools, mcp_tools_changed).
import type { McpEventRow } from '../model/mcp.ts';
import { defineTable } from './table.ts';

export const mcpEvents = defineTable<McpEventRow>()({
  name: 'mcp_events',
  row: async () => (await import('../model/mcp.ts')).mcpEventRowSchema,
  columns: {
    event_id: 'String',
    ts: "DateTime64(3, 'UTC')",
    harness: 'LowCardinality(String)',
    session_id: 'String',
    agent_id: 'String',
    host: "LowCardinality(String) DEFAULT ''",
    device_id: "LowCardinality(String) DEFAULT ''",
    server: 'String',
    client_id: 'String',
    event_kind: 'LowCardinality(String)',
    transport: 'LowCardinality(String)',
    state: 'LowCardinality(String)',
    attempt: 'Nullable(UInt32)',
    backoff_ms: 'Nullable(UInt64)',
    error: 'String',
    mcp_initialized: 'Nullable(Bool)',
    tool_count: 'Nullable(UInt32)',
    raw: 'String',
    redactions: 'UInt32 DEFAULT 0',
    source: 'String',
    ingested_at: "DateTime64(3, 'UTC')",
  },
  engine: 'ReplacingMergeTree(ingested_at)',
  partitionBy: 'toYYYYMM(ts)',
  orderBy: '(session_id, agent_id, server, event_id)',
  retention: 'ts',
  scope: 'event',
  dumpSelect: '* EXCEPT (source, ingested_at)',
});
