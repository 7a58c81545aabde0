// The discovery_events table: Derived: tool calls that are discovery events (searches, refusals of tools not in the active set, MCP calls) and what followed them.
import { discoveryEventRowSchema } from '../model/mcp.ts';
import type { DiscoveryEventRow } from '../model/mcp.ts';
import { defineTable } from './table.ts';

export const discoveryEvents = defineTable<DiscoveryEventRow>()({
  name: 'discovery_events',
  row: discoveryEventRowSchema,
  columns: {
    event_id: 'String',
    ts: "DateTime64(3, 'UTC')",
    harness: 'LowCardinality(String)',
    session_id: 'String',
    agent_id: 'String',
    host: "LowCardinality(String) DEFAULT ''",
    device_id: "LowCardinality(String) DEFAULT ''",
    turn_id: 'String',
    model: 'LowCardinality(String)',
    discovery_kind: 'LowCardinality(String)',
    tool_name: 'String',
    status: 'LowCardinality(String)',
    query: 'String',
    result_tools: 'Array(String)',
    reported_budget_exhausted: 'Bool',
    refused_tool: 'String',
    recovery_query: 'String',
    called_tool: 'String',
    source: 'String',
    ingested_at: "DateTime64(3, 'UTC')",
    turn_search_seq: 'UInt32',
    budget_refusal: 'Bool',
    recovery_searched: 'Bool',
    recovered: 'Bool',
    after_search: 'Bool',
    flags: 'Array(LowCardinality(String))',
    computed_at: "DateTime64(3, 'UTC')",
  },
  engine: 'ReplacingMergeTree(computed_at)',
  partitionBy: 'toYYYYMM(ts)',
  orderBy: '(session_id, agent_id, event_id)',
  // A batch's turns are read by turn (src/derive/discovery.ts); the sorting by event id scatters them.
  indexes: ['INDEX turn turn_id TYPE bloom_filter GRANULARITY 1'],
  retention: 'ts',
  scope: 'event',
  dumpSelect: '* EXCEPT (source, ingested_at, computed_at)',
});
