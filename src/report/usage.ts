// `report usage` with cost: observed tokens by kind per harness / model / day (or per session,
// day or model), each row with its cost_usd from the price table, computed exactly.
//
// How token kinds are charged (docs/report-html.md has the table): token_usage keeps figures as
// each harness reports them (README, Token accounting), so they are first turned into billable
// kinds that never overlap, per request:
// - input: uncached input. Where input_tokens includes cached tokens (Codex, xAI, OTel GenAI) it
//   is input - cache_read - cache_write (never below 0); elsewhere (Claude Code, opencode) it is
//   input_tokens as reported.
// - cache_read, cache_write: as reported.
// - reasoning: reasoning_tokens; output: output_tokens less reasoning where output includes it
//   (Codex, Claude Code), as reported where it does not (opencode). Reasoning is charged at the
//   model's reasoning price, which is its output price unless the table says otherwise, so a model
//   that bills reasoning as output pays the same as output_tokens times the output price.
// Each group's billable sums are multiplied by integer micro-dollars per million tokens in
// BigInt: pico-dollars, exact, rounded half up to micro-dollars once per row shown.
import { USAGE_CONVENTIONS } from '../accounting/conventions.ts';
import type { Harness } from '../canonical/meta.ts';
import { USAGE_REPORT_SQL } from './sql.ts';
import type { Row } from './sql.ts';
import { costPicoDollars, formatUsd, type PriceTable } from '../cost/prices.ts';
import type { ClickHouseSink } from '../sink/clickhouse.ts';
import { applyScope, type ReportScope } from './scope.ts';
import { byCodeUnits } from '../util/walk.ts';

export const USAGE_GROUPINGS = ['session', 'day', 'model', 'host'] as const;
/** How a report shows the model of events that named none (stored as ''). */
export const UNKNOWN_MODEL_LABEL = 'unknown';
/** `harness_model_day` is the report's default grouping (no --by). */
export type UsageGrouping = 'harness_model_day' | (typeof USAGE_GROUPINGS)[number];

const harnessesWhere = (pick: (h: Harness) => boolean): string =>
  (Object.keys(USAGE_CONVENTIONS) as Harness[]).filter(pick).map((h) => `'${h}'`).join(', ');

/** Harnesses whose input_tokens include cached tokens / whose output_tokens include reasoning. */
const INPUT_INCLUDES_CACHE = harnessesWhere((h) => USAGE_CONVENTIONS[h].inputIncludesCache);
const OUTPUT_INCLUDES_REASONING = harnessesWhere((h) => USAGE_CONVENTIONS[h].outputIncludesReasoning);

const TOKEN_SUMS = `sumIf(input_tokens, source = 'observed') AS input_tokens,
    sumIf(cache_read_tokens, source = 'observed') AS cache_read_tokens,
    sumIf(cache_write_tokens, source = 'observed') AS cache_write_tokens,
    sumIf(output_tokens, source = 'observed') AS output_tokens,
    sumIf(reasoning_tokens, source = 'observed') AS reasoning_tokens`;

/** Per grouping: the key expressions (shared by the display and the cost SQL) and the display SQL. */
const GROUPINGS: Readonly<Record<UsageGrouping, { readonly keys: readonly string[]; readonly names: readonly string[]; readonly sql: string }>> = {
  harness_model_day: { keys: ['harness', 'model', 'toString(toDate(ts))'], names: ['harness', 'model', 'day'], sql: USAGE_REPORT_SQL },
  day: {
    keys: ['toString(toDate(ts))'],
    names: ['day'],
    sql: `SELECT toDate(ts) AS day,
    countIf(source = 'observed') AS requests,
    uniqExact(session_id) AS sessions,
    ${TOKEN_SUMS},
    sumIf(estimated_tokens, source = 'estimated') AS estimated_tool_output_tokens
  FROM token_usage FINAL
  GROUP BY day
  ORDER BY day`,
  },
  model: {
    keys: ['model'],
    names: ['model'],
    sql: `SELECT model,
    arrayStringConcat(arraySort(groupUniqArray(toString(harness))), ' ') AS harnesses,
    countIf(source = 'observed') AS requests,
    uniqExact(session_id) AS sessions,
    ${TOKEN_SUMS},
    sumIf(estimated_tokens, source = 'estimated') AS estimated_tool_output_tokens
  FROM token_usage FINAL
  GROUP BY model
  ORDER BY model`,
  },
  // One row per machine: where a team's tokens were spent.
  host: {
    keys: ['toString(host)', 'toString(device_id)'],
    names: ['host', 'device_id'],
    sql: `SELECT toString(host) AS host, toString(device_id) AS device_id,
    arrayStringConcat(arraySort(groupUniqArray(toString(harness))), ' ') AS harnesses,
    countIf(source = 'observed') AS requests,
    uniqExact(session_id) AS sessions,
    ${TOKEN_SUMS},
    sumIf(estimated_tokens, source = 'estimated') AS estimated_tool_output_tokens
  FROM token_usage FINAL
  GROUP BY host, device_id
  ORDER BY host, device_id`,
  },
  // One row per session (and harness) that made a tool call or a request: the HTML report's
  // sessions table, so its rows are these rows.
  session: {
    keys: ['session_id', 'toString(harness)'],
    names: ['session_id', 'harness'],
    sql: `WITH
  calls AS (
    SELECT session_id, toString(harness) AS harness, count() AS calls, countIf(status = 'error') AS errors,
      min(ts) AS first_ts, max(ts) AS last_ts, groupUniqArrayIf(toString(model), model != '') AS models
    FROM tool_calls FINAL GROUP BY session_id, harness
  ),
  used AS (
    SELECT session_id, toString(harness) AS harness, countIf(source = 'observed') AS requests,
      ${TOKEN_SUMS},
      min(ts) AS first_ts, max(ts) AS last_ts, groupUniqArrayIf(toString(model), model != '' AND source = 'observed') AS models
    FROM token_usage FINAL GROUP BY session_id, harness
  ),
  breaches AS (
    SELECT session_id, toString(harness) AS harness, count() AS breaches FROM threshold_breaches FINAL GROUP BY session_id, harness
  ),
  sessions AS (SELECT session_id, harness FROM calls UNION DISTINCT SELECT session_id, harness FROM used)
SELECT s.session_id AS session_id, s.harness AS harness,
    arrayStringConcat(arraySort(arrayDistinct(arrayConcat(ifNull(calls.models, []), ifNull(used.models, [])))), ' ') AS models,
    least(ifNull(calls.first_ts, used.first_ts), ifNull(used.first_ts, calls.first_ts)) AS started,
    greatest(ifNull(calls.last_ts, used.last_ts), ifNull(used.last_ts, calls.last_ts)) AS ended,
    intDiv(toUnixTimestamp64Milli(ended) - toUnixTimestamp64Milli(started), 1000) AS duration_s,
    ifNull(calls.calls, 0) AS calls,
    ifNull(calls.errors, 0) AS errors,
    ifNull(used.requests, 0) AS requests,
    used.input_tokens AS input_tokens,
    used.cache_read_tokens AS cache_read_tokens,
    used.cache_write_tokens AS cache_write_tokens,
    used.output_tokens AS output_tokens,
    used.reasoning_tokens AS reasoning_tokens,
    ifNull(breaches.breaches, 0) AS breaches
  FROM sessions AS s
  LEFT JOIN calls ON calls.session_id = s.session_id AND calls.harness = s.harness
  LEFT JOIN used ON used.session_id = s.session_id AND used.harness = s.harness
  LEFT JOIN breaches ON breaches.session_id = s.session_id AND breaches.harness = s.harness
  ORDER BY started, session_id, harness
  SETTINGS join_use_nulls = 1`,
  },
};

/**
 * Billable tokens per group key, harness, model and, for each prompt limit of the price table
 * ({limits:Array(UInt64)}), whether the prompt is above it, from observed requests only. The
 * model's own limit is one of them: groupCosts picks it (the price band), so no query first asks
 * which models the data has (the statusline's today.ts does the same).
 */
export function billableTokensSql(by: UsageGrouping): string {
  const keys = GROUPINGS[by].keys.map((k, i) => `${k} AS k${i}`).join(', ');
  const keyNames = GROUPINGS[by].keys.map((_k, i) => `k${i}`).join(', ');
  return `SELECT ${keys}, toString(harness) AS cost_harness, toString(model) AS cost_model,
    arrayMap(l -> prompt_tokens > l, {limits:Array(UInt64)}) AS above,
    count() AS requests,
    toString(sum(toUInt128(fresh_input))) AS input,
    toString(sum(toUInt128(cr))) AS cache_read,
    toString(sum(toUInt128(cw))) AS cache_write,
    toString(sum(toUInt128(plain_output))) AS output,
    toString(sum(toUInt128(rs))) AS reasoning
  FROM (
    SELECT *,
      ifNull(input_tokens, 0) AS inp, ifNull(cache_read_tokens, 0) AS cr, ifNull(cache_write_tokens, 0) AS cw,
      ifNull(output_tokens, 0) AS out, ifNull(reasoning_tokens, 0) AS rs,
      harness IN (${INPUT_INCLUDES_CACHE}) AS input_includes_cache,
      if(input_includes_cache, if(inp > cr + cw, inp - cr - cw, 0), inp) AS fresh_input,
      if(input_includes_cache, inp, inp + cr + cw) AS prompt_tokens,
      if(harness IN (${OUTPUT_INCLUDES_REASONING}), if(out > rs, out - rs, 0), out) AS plain_output
    FROM token_usage FINAL
    WHERE source = 'observed'
  )
  GROUP BY ${keyNames}, cost_harness, cost_model, above`;
}

interface BillableRow {
  readonly [key: `k${number}`]: string;
  readonly cost_model: string;
  /** Per prompt limit of the price table: whether the prompt was above it. */
  readonly above: readonly (number | boolean | string)[];
  readonly requests: string;
  readonly input: string;
  readonly cache_read: string;
  readonly cache_write: string;
  readonly output: string;
  readonly reasoning: string;
}

/** A group's cost: exact pico-dollars of its priced requests, and what could not be priced. */
export interface GroupCost {
  picoDollars: bigint;
  /** `unknown_price:<model>` / `above_price_limit:<model>` / `unknown_model` → requests. */
  readonly unpriced: Map<string, number>;
}

const keyOf = (values: readonly unknown[]): string => JSON.stringify(values.map((v) => String(v ?? '')));

/** Cost per group key (JSON of the key values) for one grouping and scope. */
export async function groupCosts(sink: ClickHouseSink, by: UsageGrouping, prices: PriceTable, scope: ReportScope = {}): Promise<Map<string, GroupCost>> {
  const limits = prices.promptLimits();
  const rows = await sink.queryRows<BillableRow>({
    query: applyScope(billableTokensSql(by), scope),
    query_params: { limits: limits.map((l) => Number(l)) },
  });
  const out = new Map<string, GroupCost>();
  const n = GROUPINGS[by].keys.length;
  for (const r of rows) {
    const key = keyOf(Array.from({ length: n }, (_v, i) => r[`k${i}`]));
    let acc = out.get(key);
    if (acc === undefined) out.set(key, (acc = { picoDollars: 0n, unpriced: new Map() }));
    const { price, band } = prices.bandOf(r.cost_model, limits, r.above);
    if (band === undefined) {
      const flag = r.cost_model === '' ? 'unknown_model' : price === undefined ? `unknown_price:${r.cost_model}` : `above_price_limit:${r.cost_model}`;
      acc.unpriced.set(flag, (acc.unpriced.get(flag) ?? 0) + Number(r.requests));
      continue;
    }
    acc.picoDollars += costPicoDollars(
      { input: BigInt(r.input), cacheRead: BigInt(r.cache_read), cacheWrite: BigInt(r.cache_write), output: BigInt(r.output), reasoning: BigInt(r.reasoning) },
      band,
    );
  }
  return out;
}

/** `cost_usd` (null when any request of the row has no price) and `cost_flags` of a group. */
export function costColumns(cost: GroupCost | undefined): { cost_usd: number | null; cost_flags: string } {
  if (cost === undefined) return { cost_usd: 0, cost_flags: '' };
  const flags = [...cost.unpriced].sort((a, b) => byCodeUnits(a[0], b[0])).map(([f, n]) => `${f}=${n}`).join(' ');
  // The decimal text of micro-dollars is exact as a JSON number below 2^53 micro-dollars (9e9 USD).
  return { cost_usd: cost.unpriced.size > 0 ? null : Number(formatUsd(cost.picoDollars)), cost_flags: flags };
}

/** The rows of `report usage [--by …]`: the grouping's columns, then cost_usd and cost_flags. */
export async function usageReportRows(sink: ClickHouseSink, by: UsageGrouping, prices: PriceTable, scope: ReportScope = {}): Promise<Row[]> {
  const g = GROUPINGS[by];
  // One query at a time: the embedded engine serves one connection.
  const rows = await sink.queryDisplayRows(applyScope(g.sql, scope));
  const costs = await groupCosts(sink, by, prices, scope);
  return rows.map((row) => {
    const cost = costs.get(keyOf(g.names.map((name) => row[name])));
    const extra = by === 'model' ? { price_key: prices.resolve(String(row['model'] ?? ''))?.key ?? '' } : {};
    // An event that named no model is stored with model '': shown as "unknown", never guessed.
    const shown = row['model'] === '' ? { model: UNKNOWN_MODEL_LABEL } : {};
    return { ...row, ...shown, ...costColumns(cost), ...extra };
  });
}
