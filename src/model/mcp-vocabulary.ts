// The closed vocabularies of the MCP lifecycle and discovery records (no imports: zod-free, so
// the hot path can use them without loading the record schemas).

export const MCP_TRANSPORTS = ['stdio', 'http'] as const;
export const MCP_STATES = ['connecting', 'connected', 'disconnected', 'restarting', 'failed', 'disabled', 'removed'] as const;
export type McpState = (typeof MCP_STATES)[number];

/** The coalescing key's second half (SPEC §7: `(server_name, event_kind)`). */
export const MCP_EVENT_KINDS = ['status', 'tools', 'tools_changed'] as const;
export type McpEventKind = (typeof MCP_EVENT_KINDS)[number];

/** Flags on a derived server-state row: what the window's events did that the policy forbids. */
export const MCP_STATE_FLAGS = [
  'stale_disconnect',
  'restart_too_fast',
  'restart_off_schedule',
  'restart_attempts_exceeded',
  'restart_after_disabled',
  'restart_after_removed',
  'stale_snapshot',
] as const;
export type McpStateFlag = (typeof MCP_STATE_FLAGS)[number];

/** How a registered tool can be reached (SPEC §2), derived once per snapshot. */
export const TOOL_VISIBILITIES = ['model_visible', 'app_only', 'search_only', 'disabled'] as const;
export type ToolVisibility = (typeof TOOL_VISIBILITIES)[number];

export const REGISTRATION_FLAGS = ['bad_mcp_name', 'server_mismatch'] as const;

/** What a tool call says about discovery (SPEC §6). */
export const DISCOVERY_KINDS = ['search', 'refusal', 'call'] as const;
export type DiscoveryKind = (typeof DISCOVERY_KINDS)[number];

export const DISCOVERY_FLAGS = ['search_budget_exceeded'] as const;
