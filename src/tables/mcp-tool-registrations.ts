// The mcp_tool_registrations table: Derived: the tools each tools/list snapshot registered, with their definitions' size in bytes and tokens.
import { mcpToolRegistrationRowSchema } from '../model/mcp.ts';
import type { McpToolRegistrationRow } from '../model/mcp.ts';
import { defineTable } from './table.ts';

export const mcpToolRegistrations = defineTable<McpToolRegistrationRow>()({
  name: 'mcp_tool_registrations',
  row: mcpToolRegistrationRowSchema,
  columns: {
    registration_id: 'String',
    snapshot_event_id: 'String',
    ts: "DateTime64(3, 'UTC')",
    harness: 'LowCardinality(String)',
    session_id: 'String',
    agent_id: 'String',
    host: "LowCardinality(String) DEFAULT ''",
    device_id: "LowCardinality(String) DEFAULT ''",
    server: 'String',
    client_id: 'String',
    qualified_name: 'String',
    name_qualified: 'Bool DEFAULT false',
    mcp_server: 'String',
    mcp_tool: 'String',
    visibility: 'LowCardinality(String)',
    model_visible: 'Bool',
    disabled: 'Bool',
    ui_resource_uri: 'String',
    definition_bytes: 'Nullable(UInt64)',
    definition_tokens: 'Nullable(UInt64)',
    mcp_initialized: 'Bool',
    flags: 'Array(LowCardinality(String))',
    source: 'String',
    ingested_at: "DateTime64(3, 'UTC')",
  },
  engine: 'ReplacingMergeTree(ingested_at)',
  partitionBy: 'toYYYYMM(ts)',
  orderBy: '(session_id, server, snapshot_event_id, qualified_name)',
  retention: 'ts',
  scope: 'event',
  dumpSelect: '* EXCEPT (source, ingested_at)',
});
