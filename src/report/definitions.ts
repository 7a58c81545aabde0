// What the MCP tools cost before they are called (issue 35, SPEC §6): every request (an observed
// usage event) carries the definitions of the tools that were model-visible at its time, and pays
// for them at the model's prices. The per-request SQL is shared by `report discovery --by tool`,
// `report mcp` and the HTML report; the USD figures are computed here, exactly, from the price
// table (src/cost/), as `report usage` computes its costs.
//
// Which tools a request saw: per server, the latest tools/list snapshot of its session at or
// before the request's time (two snapshots at one instant: the greater event id, as coalescing
// keeps the last), of the request's own agent when that agent has snapshots of the server, else of
// the main agent (agent_id ''): a subagent sees the main agent's MCP tools unless it runs clients
// of its own. Of that snapshot, the tools whose visibility is `model_visible`: disabled, app-only
// and search-only tools are not in the model's tool list and cost nothing. A server whose latest
// status at the request's time, later than that snapshot, is `disabled` or `removed` shows none
// (until a new snapshot lists its tools again).
//
// How their tokens are priced: the tool definitions lead the prompt (providers render tools before
// the system prompt and the messages, and a cached prefix starts at the front), so a request's
// cache_read_tokens cover its definitions first, then its cache_write_tokens, and what remains is
// uncached input. The request's visible tools are laid end to end (by server, then name) and each
// tool's tokens are split exactly where those two ranges end; the parts are priced at the model's
// cache-read, cache-write and input prices (the long-context band above the model's prompt limit,
// as report usage does). A request without cache figures pays the input price for all of them.
import { USAGE_CONVENTIONS } from '../accounting/conventions.ts';
import type { Harness } from '../canonical/meta.ts';
import { costPicoDollars, formatUsd, type PriceTable } from '../cost/prices.ts';
import type { ClickHouseSink } from '../sink/clickhouse.ts';
import { applyScope, type ReportScope } from './scope.ts';
import type { Row } from './sql.ts';
import { byCodeUnits } from '../util/walk.ts';

const INPUT_INCLUDES_CACHE = (Object.keys(USAGE_CONVENTIONS) as Harness[]).filter((h) => USAGE_CONVENTIONS[h].inputIncludesCache).map((h) => `'${h}'`).join(', ');

/**
 * `advice` of `report discovery --by tool`: a tool model-visible in at least this many requests
 * per direct call is "rarely called" (it costs its definition in every one of them).
 */
export const REQUESTS_PER_DIRECT_CALL = 100;

/**
 * CTEs ending in `tool_overhead`: one row per observed request and tool model-visible at its
 * time: the request (session_id, event_id, harness, model, prompt_tokens), the tool (server,
 * tool, t: its definition tokens, NULL when the snapshot gave no definition) and t split into the
 * parts read from cache, written to cache and sent uncached (t_read, t_write, t_input).
 */
export const DEFINITION_OVERHEAD_CTES = `reg AS (
    SELECT session_id, agent_id, server, snapshot_event_id, ts, qualified_name, visibility, definition_tokens
    FROM mcp_tool_registrations FINAL
  ),
  snaps AS (SELECT session_id, agent_id, server, ts, max(snapshot_event_id) AS snapshot_event_id FROM reg GROUP BY session_id, agent_id, server, ts),
  requests AS (
    SELECT session_id, agent_id, event_id, ts, toString(harness) AS harness, toString(model) AS model,
      ifNull(cache_read_tokens, 0) AS cr, ifNull(cache_write_tokens, 0) AS cw,
      if(harness IN (${INPUT_INCLUDES_CACHE}), ifNull(input_tokens, 0), ifNull(input_tokens, 0) + cr + cw) AS prompt_tokens
    FROM token_usage FINAL
    WHERE source = 'observed' AND session_id IN (SELECT session_id FROM snaps)
  ),
  request_servers AS (
    SELECT o_r.session_id AS session_id, o_r.event_id AS event_id, any(o_r.ts) AS ts, o_s.server AS server, max(o_s.agent_id) AS snap_agent
    FROM requests AS o_r INNER JOIN (SELECT DISTINCT session_id, agent_id, server FROM snaps) AS o_s ON o_s.session_id = o_r.session_id
    WHERE o_s.agent_id = o_r.agent_id OR o_s.agent_id = ''
    GROUP BY session_id, event_id, server
  ),
  server_off AS (
    SELECT session_id, agent_id, server, ts, argMax(state, event_id) IN ('disabled', 'removed') AS off
    FROM mcp_events FINAL WHERE event_kind = 'status' GROUP BY session_id, agent_id, server, ts
  ),
  snapped AS (
    SELECT o_rs.session_id AS session_id, o_rs.event_id AS event_id, o_rs.ts AS ts, o_rs.server AS server, o_rs.snap_agent AS snap_agent,
      o_sn.snapshot_event_id AS snapshot_event_id, o_sn.ts AS snapshot_ts
    FROM request_servers AS o_rs
    ASOF INNER JOIN snaps AS o_sn ON o_sn.session_id = o_rs.session_id AND o_sn.agent_id = o_rs.snap_agent AND o_sn.server = o_rs.server AND o_rs.ts >= o_sn.ts
  ),
  request_snapshots AS (
    SELECT o_p.session_id AS session_id, o_p.event_id AS event_id, o_p.server AS server, o_p.snap_agent AS snap_agent, o_p.snapshot_event_id AS snapshot_event_id
    FROM snapped AS o_p
    ASOF LEFT JOIN server_off AS o_so ON o_so.session_id = o_p.session_id AND o_so.agent_id = o_p.snap_agent AND o_so.server = o_p.server AND o_p.ts >= o_so.ts
    -- No status before the request: no row (NULL under join_use_nulls, which the reports set).
    WHERE NOT ifNull(o_so.off AND o_so.ts > o_p.snapshot_ts, false)
  ),
  visible_tools AS (
    SELECT o_q.session_id AS session_id, o_q.event_id AS event_id, o_q.server AS server, o_g.qualified_name AS tool, o_g.definition_tokens AS t,
      toInt64(ifNull(o_g.definition_tokens, 0)) AS t0
    FROM request_snapshots AS o_q
    INNER JOIN (SELECT * FROM reg WHERE visibility = 'model_visible') AS o_g
      ON o_g.session_id = o_q.session_id AND o_g.agent_id = o_q.snap_agent AND o_g.server = o_q.server AND o_g.snapshot_event_id = o_q.snapshot_event_id
  ),
  laid AS (
    SELECT *, sum(t0) OVER (PARTITION BY session_id, event_id ORDER BY server, tool ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - t0 AS at
    FROM visible_tools
  ),
  tool_overhead AS (
    SELECT o_l.session_id AS session_id, o_l.event_id AS event_id, o_l.server AS server, o_l.tool AS tool, o_l.t AS t, o_l.t0 AS t0,
      o_r.harness AS harness, o_r.model AS model, o_r.prompt_tokens AS prompt_tokens,
      greatest(least(o_l.at + o_l.t0, toInt64(o_r.cr)) - o_l.at, 0) AS t_read,
      greatest(least(o_l.at + o_l.t0, toInt64(o_r.cr + o_r.cw)) - greatest(o_l.at, toInt64(o_r.cr)), 0) AS t_write,
      o_l.t0 - t_read - t_write AS t_input
    FROM laid AS o_l INNER JOIN requests AS o_r ON o_r.session_id = o_l.session_id AND o_r.event_id = o_l.event_id
  )`;

export type OverheadKey = 'tool' | 'server';

/** Per key (tool or server), model and price band: the requests and the definition tokens by price. */
function overheadCostSql(key: OverheadKey): string {
  return `WITH ${DEFINITION_OVERHEAD_CTES}
SELECT ${key} AS k, model AS cost_model,
    prompt_tokens > transform(model, {limit_models:Array(String)}, {limit_tokens:Array(UInt64)}, toUInt64(18446744073709551615)) AS above_limit,
    uniqExact(session_id, event_id) AS requests,
    countIf(t IS NULL) AS undefined_tools,
    toString(sum(t_read)) AS cache_read,
    toString(sum(t_write)) AS cache_write,
    toString(sum(t_input)) AS input
  FROM tool_overhead
  GROUP BY k, cost_model, above_limit`;
}

interface OverheadCostRow {
  readonly k: string;
  readonly cost_model: string;
  readonly above_limit: number | boolean | string;
  readonly requests: string | number;
  readonly undefined_tools: string | number;
  readonly cache_read: string;
  readonly cache_write: string;
  readonly input: string;
}

/** A key's definition cost: exact pico-dollars of what could be priced, and what could not. */
export interface DefinitionCost {
  picoDollars: bigint;
  /** `unknown_price:<model>` / `above_price_limit:<model>` / `unknown_model` / `definition_unknown` → requests. */
  readonly unpriced: Map<string, number>;
}

/** The definition cost of every tool (qualified name) or server, in a scope. */
export async function definitionCosts(sink: ClickHouseSink, key: OverheadKey, prices: PriceTable, scope: ReportScope = {}): Promise<Map<string, DefinitionCost>> {
  const models = await sink.queryRows<{ model: string }>(applyScope(`SELECT DISTINCT toString(model) AS model FROM token_usage FINAL WHERE source = 'observed'`, scope));
  const limited = models.flatMap((m) => {
    const limit = prices.resolve(m.model)?.maxPromptTokens;
    return limit === undefined ? [] : [{ model: m.model, limit }];
  });
  const rows = await sink.queryRows<OverheadCostRow>({
    query: applyScope(overheadCostSql(key), scope),
    query_params: { limit_models: limited.map((l) => l.model), limit_tokens: limited.map((l) => Number(l.limit)) },
  });
  const out = new Map<string, DefinitionCost>();
  for (const r of rows) {
    let acc = out.get(r.k);
    if (acc === undefined) out.set(r.k, (acc = { picoDollars: 0n, unpriced: new Map() }));
    const note = (flag: string, n: number): void => void acc.unpriced.set(flag, (acc.unpriced.get(flag) ?? 0) + n);
    // A tool listed without a definition: its share of every request it was visible in is unknown.
    if (Number(r.undefined_tools) > 0) note('definition_unknown', Number(r.requests));
    const price = prices.resolve(r.cost_model);
    const above = r.above_limit === true || r.above_limit === 1 || r.above_limit === '1' || r.above_limit === 'true';
    const band = price === undefined ? undefined : above ? price.longContext : price.base;
    if (band === undefined) {
      note(r.cost_model === '' ? 'unknown_model' : price === undefined ? `unknown_price:${r.cost_model}` : `above_price_limit:${r.cost_model}`, Number(r.requests));
      continue;
    }
    acc.picoDollars += costPicoDollars({ input: BigInt(r.input), cacheRead: BigInt(r.cache_read), cacheWrite: BigInt(r.cache_write), output: 0n, reasoning: 0n }, band);
  }
  return out;
}

/** `definition_cost_usd` (null when a request of the key has no price or a tool no definition) and its flags. */
export function definitionCostColumns(cost: DefinitionCost | undefined): { definition_cost_usd: number | null; definition_cost_flags: string } {
  if (cost === undefined) return { definition_cost_usd: 0, definition_cost_flags: '' };
  const flags = [...cost.unpriced].sort((a, b) => byCodeUnits(a[0], b[0])).map(([f, n]) => `${f}=${n}`).join(' ');
  return { definition_cost_usd: cost.unpriced.size > 0 ? null : Number(formatUsd(cost.picoDollars)), definition_cost_flags: flags };
}

/**
 * The rows of a report with each row's definition cost placed right after `after` (the column
 * of the tokens it prices); `key` names the column that holds the tool or server.
 */
export async function withDefinitionCost(sink: ClickHouseSink, rows: readonly Row[], key: OverheadKey, prices: PriceTable, scope: ReportScope = {}): Promise<Row[]> {
  const costs = await definitionCosts(sink, key, prices, scope);
  return rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(row)) {
      out[name] = value;
      if (name === 'definition_tokens_total') Object.assign(out, definitionCostColumns(costs.get(String(row[key] ?? ''))));
    }
    return out;
  });
}
