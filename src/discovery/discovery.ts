// Tool discovery (SPEC §6) read from ordinary tool calls: searches of a family's search
// meta-tool, calls refused as "not in active set", and calls of MCP tools. Observation is per
// call (at decode); what depends on other calls (the search's place in its turn, the budget,
// whether a refusal recovered, whether a call was preceded by a search that named its tool) is
// derived from all the observations of one session and agent, by event time, so every path and
// every batching of the same events gives the same rows.
import { parseMcpName, stripMcpPrefix } from '../canonical/mcp.ts';
import { isSearchMetaTool } from '../catalogue/index.ts';
import { inEventTime } from '../mcp/lifecycle.ts';
import { chooseCopies } from './copies.ts';
import type { DiscoveryEventRow, DiscoveryObservation } from '../model/mcp.ts';
import type { ToolCallRow } from '../model/records.ts';

/** Searches per agent turn before the harness must refuse with search-budget-exhausted. */
export const SEARCH_BUDGET_PER_TURN = 3;

/**
 * What observation needs of a decoded tool call's row (the row itself is passed: building a
 * literal of these fields for every call, when most say nothing about discovery, cost more than
 * the observation).
 */
export type DiscoveryRow = Pick<ToolCallRow, 'event_id' | 'ts' | 'harness' | 'session_id' | 'agent_id' | 'host' | 'device_id' | 'turn_id' | 'model' | 'status' | 'raw_input' | 'namespace' | 'mcp_server' | 'mcp_tool' | 'source' | 'ingested_at'>;

/** What the row does not keep: the tool as sent (redacted), the output and the error as sent (undefined when absent). */
interface CallText {
  readonly tool: string;
  readonly output: string | undefined;
  readonly error: string | undefined;
}

const REFUSAL = /Tool '([^']+)' not in active set/;
const RECOVERY = /\(\s*query\s*=\s*'([^']*)'\s*\)/;
const BUDGET = 'search-budget-exhausted';
/** A qualified MCP name in free text (an optional harness prefix, then `server__tool`). */
const QUALIFIED_IN_TEXT = /(?:^|[^A-Za-z0-9_-])((?:mcp__)?[A-Za-z0-9][A-Za-z0-9-]*(?:_[A-Za-z0-9-]+)*__[A-Za-z0-9][A-Za-z0-9_.-]*)/g;

/**
 * The discovery observation of one tool call, or undefined when it says nothing about discovery.
 * `tool` is the tool as sent, `output` and `error` as sent (the error redacted), undefined when absent.
 */
export function observeDiscovery(c: DiscoveryRow, tool: string, output: string | undefined, error: string | undefined): DiscoveryObservation | undefined {
  // Most calls say nothing about discovery: decide that before building anything.
  const search = isSearchMetaTool(c.harness, tool);
  const refusalText = search ? undefined : refusalOf(c.status, output, error);
  if (!search && refusalText === undefined && !(c.namespace === 'mcp' && c.mcp_server !== '' && c.mcp_tool !== '')) return undefined;
  const t: CallText = { tool, output, error };
  if (search) {
    const reported = (output?.includes(BUDGET) ?? false) || (error?.includes(BUDGET) ?? false);
    return observation(c, t, 'search', queryOf(c.raw_input), reported || output === undefined ? [] : namesInResult(output), reported, '', '', '');
  }
  if (refusalText !== undefined) {
    const m = REFUSAL.exec(refusalText);
    return observation(c, t, 'refusal', '', [], false, m?.[1] ?? '', RECOVERY.exec(refusalText)?.[1] ?? '', '');
  }
  return observation(c, t, 'call', '', [], false, '', '', `${c.mcp_server}__${c.mcp_tool}`);
}

/** One observation, every field written out (spreading shared parts into it was slow in V8). */
function observation(
  c: DiscoveryRow,
  t: CallText,
  kind: DiscoveryObservation['discovery_kind'],
  query: string,
  resultTools: string[],
  reportedBudgetExhausted: boolean,
  refusedTool: string,
  recoveryQuery: string,
  calledTool: string,
): DiscoveryObservation {
  return {
    event_id: c.event_id,
    ts: c.ts,
    harness: c.harness,
    session_id: c.session_id,
    agent_id: c.agent_id,
    host: c.host,
    device_id: c.device_id,
    turn_id: c.turn_id,
    model: c.model,
    tool_name: t.tool,
    status: c.status,
    source: c.source,
    ingested_at: c.ingested_at,
    query,
    result_tools: resultTools,
    reported_budget_exhausted: reportedBudgetExhausted,
    refused_tool: refusedTool,
    recovery_query: recoveryQuery,
    called_tool: calledTool,
    discovery_kind: kind,
  };
}

function refusalOf(status: string, output: string | undefined, error: string | undefined): string | undefined {
  if (error !== undefined && error.includes(' not in active set')) return error;
  if (status === 'error' && output !== undefined && output.includes(' not in active set')) return output;
  return undefined;
}

function queryOf(rawInput: string): string {
  try {
    const v = JSON.parse(rawInput) as unknown;
    if (typeof v === 'object' && v !== null && typeof (v as { query?: unknown }).query === 'string') return (v as { query: string }).query;
  } catch {
    // Not JSON: no query to read.
  }
  return '';
}

/** A valid qualified name (prefix stripped), or undefined. */
function qualify(name: string, server?: string): string | undefined {
  const stripped = stripMcpPrefix(name);
  const direct = parseMcpName(stripped);
  if (direct.ok) return direct.qualified;
  if (server !== undefined && server !== '' && !stripped.includes('__')) {
    const joined = parseMcpName(`${server}__${stripped}`);
    if (joined.ok) return joined.qualified;
  }
  return undefined;
}

/**
 * The qualified names a search result lists, in order, once each. JSON results are walked:
 * results grouped by server (`{server, tools: [{name}]}`), tool entries naming `server_name` and
 * `tool_name` (Codex), tool_reference blocks (Claude Code), or any `name` / `tool_name` holding a
 * qualified name. A result that is not JSON is scanned for qualified names.
 */
export function namesInResult(output: string): string[] {
  const out = new Set<string>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(output);
  } catch {
    for (const m of output.matchAll(QUALIFIED_IN_TEXT)) {
      const q = qualify(m[1] as string);
      if (q !== undefined) out.add(q);
    }
    return [...out];
  }
  // inTools: the value is an entry of a `tools` list, where a bare name is its server's tool.
  type Item = { value: unknown; server: string | undefined; inTools: boolean };
  const stack: Item[] = [{ value: parsed, server: undefined, inTools: false }];
  let steps = 0;
  while (stack.length > 0 && steps++ < 100_000) {
    const { value, server, inTools } = stack.pop() as Item;
    if (typeof value === 'string') {
      // A content block's text may itself hold the JSON result (MCP content arrays).
      if (value.length > 1 && (value[0] === '{' || value[0] === '[')) {
        try {
          stack.push({ value: JSON.parse(value) as unknown, server, inTools: false });
        } catch {
          // Plain text.
        }
      }
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], server, inTools });
      continue;
    }
    const o = value as Record<string, unknown>;
    const ownServer = typeof o['server'] === 'string' ? o['server'] : typeof o['server_name'] === 'string' ? o['server_name'] : server;
    for (const key of ['qualified_name', 'tool_name', 'name']) {
      const v = o[key];
      if (typeof v !== 'string') continue;
      // Outside a tools list only a name that is already qualified counts (a server's own
      // `name` is not a tool); Codex entries pair server_name with a bare tool_name.
      const joinWith = inTools || (key === 'tool_name' && typeof o['server_name'] === 'string') ? ownServer : undefined;
      const q = qualify(v, joinWith);
      if (q !== undefined) {
        out.add(q);
        break;
      }
    }
    const keys = Object.keys(o);
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i] as string;
      if (k === 'input_schema' || k === 'inputSchema' || k === 'description') continue;
      stack.push({ value: o[k], server: ownServer, inTools: k === 'tools' });
    }
  }
  return [...out];
}

/** True when a qualified name is the tool a refusal named (bare or qualified, any prefix). */
function isNamedTool(qualified: string, named: string): boolean {
  const n = stripMcpPrefix(named);
  return qualified === n || qualified.endsWith(`__${n}`);
}

/**
 * Whether a search before `o` (in event time) listed the tool: given when the observations are
 * whole turns of a context but not all of it (src/derive/discovery.ts), from the first listing
 * of each tool in the context.
 */
export type ListedBefore = (tool: string, o: DiscoveryObservation) => boolean;

/**
 * The discovery rows of one session and agent, derived from all its observations; with
 * `listedBefore`, from all the observations of the turns given (what a row depends on but its
 * after_search lies within its turn).
 */
export function deriveDiscovery(observations: readonly DiscoveryObservation[], computedAt: string, listedBefore?: ListedBefore): DiscoveryEventRow[] {
  const ordered = inEventTime(observations);
  const searchesInTurn = new Map<string, number>();
  const listed = new Set<string>();
  const rows: DiscoveryEventRow[] = [];
  for (let i = 0; i < ordered.length; i++) {
    const o = ordered[i] as DiscoveryObservation;
    // Every field written out: spreading the observation into this literal made a slow object
    // (measured: ~6 KB of allocation an observation in a replay, and slow reads when encoded).
    const row: DiscoveryEventRow = {
      event_id: o.event_id,
      ts: o.ts,
      harness: o.harness,
      session_id: o.session_id,
      agent_id: o.agent_id,
      host: o.host,
      device_id: o.device_id,
      turn_id: o.turn_id,
      model: o.model,
      discovery_kind: o.discovery_kind,
      tool_name: o.tool_name,
      status: o.status,
      query: o.query,
      result_tools: o.result_tools,
      reported_budget_exhausted: o.reported_budget_exhausted,
      refused_tool: o.refused_tool,
      recovery_query: o.recovery_query,
      called_tool: o.called_tool,
      source: o.source,
      ingested_at: o.ingested_at,
      turn_search_seq: 0,
      budget_refusal: false,
      recovery_searched: false,
      recovered: false,
      after_search: false,
      flags: [],
      computed_at: computedAt,
    };
    if (o.discovery_kind === 'search') {
      const seq = (searchesInTurn.get(o.turn_id) ?? 0) + 1;
      searchesInTurn.set(o.turn_id, seq);
      row.turn_search_seq = seq;
      row.budget_refusal = seq > SEARCH_BUDGET_PER_TURN || o.reported_budget_exhausted;
      if (seq > SEARCH_BUDGET_PER_TURN && !o.reported_budget_exhausted) row.flags = ['search_budget_exceeded'];
      for (const t of o.result_tools) listed.add(t);
    } else if (o.discovery_kind === 'call') {
      row.after_search = listedBefore === undefined ? listed.has(o.called_tool) : listedBefore(o.called_tool, o);
    } else if (o.refused_tool !== '') {
      // The recovery the error names: a later search of the same turn for it, then a successful call.
      const query = o.recovery_query.trim().toLowerCase();
      for (let j = i + 1; j < ordered.length; j++) {
        const next = ordered[j] as DiscoveryObservation;
        if (next.turn_id !== o.turn_id) continue;
        if (!row.recovery_searched) {
          if (next.discovery_kind === 'search' && ((query !== '' && next.query.trim().toLowerCase() === query) || next.result_tools.some((t) => isNamedTool(t, o.refused_tool)))) {
            row.recovery_searched = true;
          }
        } else if (next.discovery_kind === 'call' && next.status === 'ok' && isNamedTool(next.called_tool, o.refused_tool)) {
          row.recovered = true;
          break;
        }
      }
    }
    rows.push(row);
  }
  return rows;
}

/**
 * The discovery rows of every session context the observations belong to. Of two copies of one
 * event the one that ranks highest stays, as in tool_calls (src/discovery/copies.ts: finished over
 * pending, then `versions`, the ranks tool_calls gave the copies); a copy that says the same as an
 * earlier one leaves the earlier (callers pass stored observations before new ones).
 */
export function deriveDiscoveryPerContext(observations: readonly DiscoveryObservation[], computedAt: string, versions?: ReadonlyMap<string, bigint>): DiscoveryEventRow[] {
  const byContext = new Map<string, DiscoveryObservation[]>();
  for (const o of chooseCopies(observations, versions)) {
    const k = `${o.session_id}\u0000${o.agent_id}`;
    const list = byContext.get(k);
    if (list) list.push(o);
    else byContext.set(k, [o]);
  }
  return [...byContext.values()].flatMap((list) => deriveDiscovery(list, computedAt));
}
