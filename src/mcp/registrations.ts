// Tool registrations of one tools/list snapshot (SPEC §2): one row per listed tool, with its
// qualified name checked against the one-separator rule and its visibility derived once. A name
// as the server itself lists it (`create_issue`, no separator) is qualified with the snapshot's
// server (`github__create_issue`) and the row says so (name_qualified).
import { idOf } from '../util/hash.ts';
import { qualifyMcpName } from '../canonical/mcp.ts';
import type { McpToolRegistrationRow } from '../model/mcp.ts';
import type { ToolVisibility } from '../model/mcp-vocabulary.ts';
import { definitionSize } from './definitions.ts';

export interface SnapshotTool {
  readonly name: string;
  readonly model_visible: boolean;
  readonly disabled: boolean;
  readonly ui_resource_uri?: string;
  readonly description?: string;
  /** input_schema's JSON text as received (its key order and numbers as listed). */
  readonly input_schema_json?: string;
}

/**
 * Disabled wins (never visible); then model-visible (enters the model-side tool bridge); then
 * app-only (has a UI resource, surfaced to the app only); the rest are registered but reachable
 * only through the search meta-tool (`search_only`, MCP's default in SPEC §1).
 */
export function visibilityOf(tool: SnapshotTool): ToolVisibility {
  if (tool.disabled) return 'disabled';
  if (tool.model_visible) return 'model_visible';
  if (tool.ui_resource_uri !== undefined && tool.ui_resource_uri !== '') return 'app_only';
  return 'search_only';
}

type SnapshotContext = Pick<McpToolRegistrationRow, 'ts' | 'harness' | 'session_id' | 'agent_id' | 'host' | 'device_id' | 'server' | 'client_id' | 'mcp_initialized' | 'source' | 'ingested_at'>;

export function deriveRegistrations(snapshotEventId: string, ctx: SnapshotContext, tools: readonly SnapshotTool[]): McpToolRegistrationRow[] {
  const rows = new Map<string, McpToolRegistrationRow>();
  for (const tool of tools) {
    const { qualified, parsed, qualifiedHere } = qualifyMcpName(tool.name, ctx.server);
    const flags: McpToolRegistrationRow['flags'] = [];
    if (!parsed.ok) flags.push('bad_mcp_name');
    else if (parsed.server !== ctx.server) flags.push('server_mismatch');
    const size = definitionSize(qualified, tool.description, tool.input_schema_json);
    // A name listed twice in one snapshot is one registration (the last listing wins).
    rows.set(qualified, {
      registration_id: idOf(snapshotEventId, qualified),
      snapshot_event_id: snapshotEventId,
      ts: ctx.ts,
      harness: ctx.harness,
      session_id: ctx.session_id,
      agent_id: ctx.agent_id,
      host: ctx.host,
      device_id: ctx.device_id,
      server: ctx.server,
      client_id: ctx.client_id,
      qualified_name: qualified,
      name_qualified: qualifiedHere,
      mcp_server: parsed.ok ? parsed.server : '',
      mcp_tool: parsed.ok ? parsed.tool : '',
      visibility: visibilityOf(tool),
      model_visible: tool.model_visible,
      disabled: tool.disabled,
      ui_resource_uri: tool.ui_resource_uri ?? '',
      definition_bytes: size?.bytes ?? null,
      definition_tokens: size?.tokens ?? null,
      mcp_initialized: ctx.mcp_initialized,
      flags,
      source: ctx.source,
      ingested_at: ctx.ingested_at,
    });
  }
  return [...rows.values()];
}
