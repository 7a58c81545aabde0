// Records of the MCP lifecycle and tool discovery (SPEC §2, §6, §7): one zod schema each, the
// TypeScript types inferred from it. Runtime code imports only the types (zod stays unloaded on
// the hot path); the sink's column lists are checked against these types at compile time.
import { z } from 'zod';
import { HARNESSES } from '../canonical/meta.ts';
import {
  DISCOVERY_FLAGS,
  DISCOVERY_KINDS,
  MCP_EVENT_KINDS,
  MCP_STATE_FLAGS,
  REGISTRATION_FLAGS,
  TOOL_VISIBILITIES,
} from './mcp-vocabulary.ts';

/** One raw MCP lifecycle event, as stored in mcp_events (all kept, deduplicated by event_id). */
export const mcpEventRowSchema = z.object({
  event_id: z.string(),
  ts: z.string(),
  harness: z.enum(HARNESSES),
  session_id: z.string(),
  agent_id: z.string(),
  host: z.string(),
  device_id: z.string(),
  server: z.string(),
  client_id: z.string(),
  event_kind: z.enum(MCP_EVENT_KINDS),
  /** '' unless a status event. */
  transport: z.string(),
  state: z.string(),
  attempt: z.number().int().positive().nullable(),
  backoff_ms: z.number().int().nonnegative().nullable(),
  error: z.string(),
  /** Snapshots only: whether capability discovery had finished, and how many tools were listed. */
  mcp_initialized: z.boolean().nullable(),
  tool_count: z.number().int().nonnegative().nullable(),
  /** The event line as received. */
  raw: z.string(),
  /** Secrets replaced in raw (and the columns read from it). */
  redactions: z.number().int().nonnegative(),
  source: z.string(),
  ingested_at: z.string(),
});
export type McpEventRow = z.infer<typeof mcpEventRowSchema>;

/**
 * The server's state after the last event of one coalescing key `(server, event_kind)` in one
 * 50 ms window of event time: what a dispatcher that coalesces last-write-wins would push.
 * Counters are cumulative for the server (in its session) up to that event.
 */
export const mcpServerStateRowSchema = z.object({
  state_id: z.string(),
  harness: z.enum(HARNESSES),
  session_id: z.string(),
  agent_id: z.string(),
  host: z.string(),
  device_id: z.string(),
  server: z.string(),
  event_kind: z.enum(MCP_EVENT_KINDS),
  window_start: z.string(),
  /** Time of the window's last event of this kind (the one that won). */
  ts: z.string(),
  coalesced_events: z.number().int().positive(),
  last_event_id: z.string(),
  client_id: z.string(),
  transport: z.string(),
  state: z.string(),
  since: z.string(),
  connected_ms: z.number().int().nonnegative(),
  observed_ms: z.number().int().nonnegative(),
  reconnects: z.number().int().nonnegative(),
  stale_disconnects: z.number().int().nonnegative(),
  restarts: z.number().int().nonnegative(),
  restart_attempt: z.number().int().nonnegative(),
  backoff_ms: z.number().int().nonnegative().nullable(),
  tools_changed_events: z.number().int().nonnegative(),
  tool_count: z.number().int().nonnegative().nullable(),
  mcp_initialized: z.boolean().nullable(),
  error: z.string(),
  flags: z.array(z.enum(MCP_STATE_FLAGS)),
  /**
   * The derivation's whole state after the window's winning event (JSON, src/mcp/lifecycle.ts):
   * a later batch continues from the last row instead of reading the server's history.
   */
  carry: z.string(),
  computed_at: z.string(),
});
export type McpServerStateRow = z.infer<typeof mcpServerStateRowSchema>;

/** One tool of one tools/list snapshot, with its visibility. */
export const mcpToolRegistrationRowSchema = z.object({
  registration_id: z.string(),
  snapshot_event_id: z.string(),
  ts: z.string(),
  harness: z.enum(HARNESSES),
  session_id: z.string(),
  agent_id: z.string(),
  host: z.string(),
  device_id: z.string(),
  server: z.string(),
  client_id: z.string(),
  /**
   * The name as registered, `mcp__` prefix stripped; `server__tool` when valid. A name listed
   * without the separator (the server's own tool name) is qualified with the snapshot's server.
   */
  qualified_name: z.string(),
  /** True when the snapshot listed the tool's own name and `server__` was put in front of it here. */
  name_qualified: z.boolean(),
  /** Parsed from a valid qualified name; '' when the name is flagged. */
  mcp_server: z.string(),
  mcp_tool: z.string(),
  visibility: z.enum(TOOL_VISIBILITIES),
  model_visible: z.boolean(),
  disabled: z.boolean(),
  ui_resource_uri: z.string(),
  /**
   * UTF-8 bytes of the tool's definition as the model receives it (compact JSON of qualified
   * name, description, input_schema: src/mcp/definitions.ts), and its estimated tokens (bytes / 4,
   * SPEC §4); null when the snapshot listed neither description nor input_schema.
   */
  definition_bytes: z.number().int().nonnegative().nullable(),
  definition_tokens: z.number().int().nonnegative().nullable(),
  mcp_initialized: z.boolean(),
  flags: z.array(z.enum(REGISTRATION_FLAGS)),
  source: z.string(),
  ingested_at: z.string(),
});
export type McpToolRegistrationRow = z.infer<typeof mcpToolRegistrationRowSchema>;

/**
 * One discovery-relevant tool call: a search of the family's search meta-tool, a call refused as
 * "not in active set", or a call of an MCP tool. The observation columns come from the call
 * itself; the derived ones from the calls before and after it in its session and agent, by
 * event time.
 */
export const discoveryEventRowSchema = z.object({
  event_id: z.string(),
  ts: z.string(),
  harness: z.enum(HARNESSES),
  session_id: z.string(),
  agent_id: z.string(),
  host: z.string(),
  device_id: z.string(),
  turn_id: z.string(),
  model: z.string(),
  discovery_kind: z.enum(DISCOVERY_KINDS),
  /** The tool called, as the harness named it (the search meta-tool for a search). */
  tool_name: z.string(),
  status: z.enum(['ok', 'error', 'pending']),
  /** Searches: the query and the qualified names the result listed. */
  query: z.string(),
  result_tools: z.array(z.string()),
  /** The call's result or error was `{"error":"search-budget-exhausted",...}`. */
  reported_budget_exhausted: z.boolean(),
  /** Refusals: the tool named as not in the active set, and the query of the recovery it names. */
  refused_tool: z.string(),
  recovery_query: z.string(),
  /** Calls: the qualified `server__tool` called. */
  called_tool: z.string(),
  // Derived.
  /** Searches: 1 for the turn's first search, 2 for the second, ... */
  turn_search_seq: z.number().int().nonnegative(),
  /** The 4th and later searches of a turn, and any search the harness refused for budget. */
  budget_refusal: z.boolean(),
  /** Refusals: a later search of the same turn named the tool (or ran the recovery query). */
  recovery_searched: z.boolean(),
  /** Refusals: ... and a later call of the tool in the same turn succeeded. */
  recovered: z.boolean(),
  /** Calls: an earlier search of the session and agent listed the tool. */
  after_search: z.boolean(),
  flags: z.array(z.enum(DISCOVERY_FLAGS)),
  source: z.string(),
  ingested_at: z.string(),
  computed_at: z.string(),
});
export type DiscoveryEventRow = z.infer<typeof discoveryEventRowSchema>;

/** The observation part of a discovery row (what decoding one tool call gives). */
export type DiscoveryObservation = Omit<DiscoveryEventRow, 'turn_search_seq' | 'budget_refusal' | 'recovery_searched' | 'recovered' | 'after_search' | 'flags' | 'computed_at'>;
