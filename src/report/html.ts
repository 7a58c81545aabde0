// `toolcanon report html`: one self-contained HTML file (Chart.js, styles, script and data
// inlined; no request at view time) built from the same SQL as the CLI reports, scoped by
// --since / --until / --harness. Every figure in the page comes from a report's rows; the
// headline figures are sums of those rows, so they equal the CLI's --format json figures.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { USAGE_CONVENTIONS } from '../accounting/conventions.ts';
import type { Harness } from '../canonical/meta.ts';
import {
  BREACHES_REPORT_SQL,
  DEAD_LETTERS_REPORT_SQL,
  DISCOVERY_BY_MODEL_SQL,
  DISCOVERY_BY_TOOL_SQL,
  DISCOVERY_FUNNEL_SQL,
  DRIFT_REPORT_SQL,
  MCP_REPORT_SQL,
  toolsReportSql,
} from './sql.ts';
import type { Row } from './sql.ts';
import { formatUsd, type PriceTable } from '../cost/prices.ts';
import type { ClickHouseSink } from '../sink/clickhouse.ts';
import { applyScope, type ReportScope } from './scope.ts';
import { usageReportRows } from './usage.ts';
import { withDefinitionCost } from './definitions.ts';
import { byCodeUnits } from '../util/walk.ts';

/** The tools whose definitions cost the most over the requests they were visible in: at most this many. */
const TOP_DEFINITION_COSTS = 10;

/** The package root: the same two levels up from src/report/ and from dist/report/. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ASSETS = join(ROOT, 'src', 'report', 'assets');

/** Chart.js's UMD build (its package exports do not name it, so it is found beside the main file). */
function chartJsSource(): string {
  const main = createRequire(import.meta.url).resolve('chart.js');
  return readFileSync(join(dirname(main), 'chart.umd.min.js'), 'utf8');
}

/** Context series per session: at most this many sessions, this many points each. */
const CONTEXT_SESSIONS = 6;
const CONTEXT_POINTS = 400;

/**
 * The sessions whose context came closest to (or over) the threshold: those that crossed first,
 * earliest crossing first, then the highest peak. One row per token_usage row of those sessions.
 */
const CONTEXT_SQL = `WITH
  crossed AS (SELECT session_id, agent_id, min(ts) AS first_breach, count() AS breaches FROM threshold_breaches FINAL GROUP BY session_id, agent_id),
  peaks AS (
    SELECT session_id, agent_id, max(usage_pct) AS peak_pct FROM token_usage FINAL
    WHERE context_window_tokens IS NOT NULL GROUP BY session_id, agent_id
  ),
  picked AS (
    -- Without a match the LEFT JOIN leaves defaults: 0 breaches (sorted after), the epoch.
    SELECT p.session_id AS session_id, p.agent_id AS agent_id, c.first_breach AS first_breach, c.breaches AS breaches, p.peak_pct AS peak_pct
    FROM peaks AS p LEFT JOIN crossed AS c ON c.session_id = p.session_id AND c.agent_id = p.agent_id
    ORDER BY breaches > 0 DESC, first_breach ASC, peak_pct DESC, session_id
    LIMIT ${CONTEXT_SESSIONS}
  )
SELECT u.session_id AS session_id, u.agent_id AS agent_id, toString(u.harness) AS harness, toString(u.model) AS model,
    toUnixTimestamp64Milli(u.ts) AS t, u.context_tokens AS context_tokens, toString(u.context_source) AS context_source,
    u.context_window_tokens AS window, u.threshold_pct AS threshold_pct, u.headroom_tokens AS headroom_tokens,
    picked.breaches AS breaches, picked.peak_pct AS peak_pct
  FROM (SELECT * FROM token_usage FINAL) AS u
  INNER JOIN picked ON picked.session_id = u.session_id AND picked.agent_id = u.agent_id
  WHERE u.context_window_tokens IS NOT NULL
  ORDER BY picked.breaches > 0 DESC, picked.first_breach ASC, picked.peak_pct DESC, u.session_id, u.agent_id, u.ts, u.session_seq`;

const BREACH_POINTS_SQL = `SELECT session_id, agent_id, toUnixTimestamp64Milli(ts) AS t, used_tokens FROM threshold_breaches FINAL ORDER BY ts`;

export interface HtmlReportOptions {
  readonly prices: PriceTable;
  readonly scope?: ReportScope;
  /** Where the data came from, shown in the footer (never credentials). */
  readonly source?: string;
  readonly generatedAt?: Date;
  /** How many of the report's queries may run at once (default 1: the embedded engine's one at a time). */
  readonly concurrency?: number;
}

const num = (v: unknown): number => (v === null || v === undefined || v === '' ? 0 : Number(v));
const sumOf = (rows: readonly Row[], col: string): number => rows.reduce((n, r) => n + num(r[col]), 0);

/** Sum of exact decimal dollar amounts (JSON numbers of at most 6 decimals) in micro-dollars. */
function microDollars(value: unknown): bigint {
  const [whole = '0', frac = ''] = String(value).split('.');
  return BigInt(whole) * 1_000_000n + BigInt((frac + '000000').slice(0, 6));
}

interface ContextSeries {
  session_id: string;
  agent_id: string;
  harness: string;
  model: string;
  window: number;
  threshold_tokens: number;
  threshold_pct: number;
  headroom_tokens: number;
  breaches: number;
  points: [number, number][];
  breach_points: [number, number][];
}

/**
 * Runs tasks at most `limit` at a time, each started in the order asked: with a limit of 1 the
 * queries run one after another, as they are written.
 */
function limiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return <T>(task: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolveTask, rejectTask) => {
      const run = (): void => {
        active++;
        task()
          .then(resolveTask, rejectTask)
          .finally(() => {
            active--;
            waiting.shift()?.();
          });
      };
      if (active < limit) run();
      else waiting.push(run);
    });
}

/** Every figure the page shows, each from a report's rows. */
export async function collectReportData(sink: ClickHouseSink, options: HtmlReportOptions): Promise<Record<string, unknown>> {
  const scope = options.scope ?? {};
  // The embedded engine in this process takes one query at a time; a server (an owner's, too) several.
  const at = limiter(Math.max(1, Math.floor(options.concurrency ?? 1)));
  const q = (sql: string): Promise<Row[]> => at(() => sink.queryDisplayRows(applyScope(sql, scope)));
  const [usage, byModel, sessions, tools, breaches, deadLetters, drift, mcp, definitionRows, discovery, funnel, contextRows, breachPoints] = await Promise.all([
    at(() => usageReportRows(sink, 'harness_model_day', options.prices, scope)),
    at(() => usageReportRows(sink, 'model', options.prices, scope)),
    at(() => usageReportRows(sink, 'session', options.prices, scope)),
    q(toolsReportSql('tool')),
    q(BREACHES_REPORT_SQL),
    // Dead letters carry no event time and no harness (every day and harness); their machine, when
    // known, as report dead-letters --host reads it.
    at(() => sink.queryDisplayRows(applyScope(DEAD_LETTERS_REPORT_SQL, { host: scope.host }))),
    q(DRIFT_REPORT_SQL),
    at(async () => withDefinitionCost(sink, await sink.queryDisplayRows(applyScope(MCP_REPORT_SQL, scope)), 'server', options.prices, scope)),
    // What tools cost before they are called: report discovery --by tool's rows, the costliest first.
    at(async () => withDefinitionCost(sink, await sink.queryDisplayRows(applyScope(DISCOVERY_BY_TOOL_SQL, scope)), 'tool', options.prices, scope)),
    q(DISCOVERY_BY_MODEL_SQL),
    // The funnel: each step a subset of the step it names; calls without a turn id counted apart.
    q(DISCOVERY_FUNNEL_SQL),
    q(CONTEXT_SQL),
    q(BREACH_POINTS_SQL),
  ]);
  const definitionCosts = definitionRows
    .filter((r) => num(r['definition_tokens_total']) > 0)
    .sort((a, b) => num(b['definition_tokens_total']) - num(a['definition_tokens_total']) || byCodeUnits(String(a['tool']), String(b['tool'])))
    .slice(0, TOP_DEFINITION_COSTS)
    .map((r) => ({
      tool: r['tool'], server: r['server'], definition_tokens: r['definition_tokens'], requests_while_visible: r['requests_while_visible'],
      definition_tokens_total: r['definition_tokens_total'], definition_cost_usd: r['definition_cost_usd'], cost_flags: r['definition_cost_flags'],
      calls: r['calls'], advice: r['advice'],
    }));

  // Cost: the sum of the per-model costs that are known; what has no price is listed, not zero.
  let knownMicro = 0n;
  const unpriced: string[] = [];
  for (const r of byModel) {
    if (r['cost_usd'] === null) unpriced.push(String(r['cost_flags']));
    else knownMicro += microDollars(r['cost_usd']);
  }
  const headline = {
    sessions: sessions.length,
    tool_calls: sumOf(tools, 'calls'),
    errors: sumOf(tools, 'errors'),
    requests: sumOf(usage, 'requests'),
    input_tokens: sumOf(usage, 'input_tokens'),
    cache_read_tokens: sumOf(usage, 'cache_read_tokens'),
    cache_write_tokens: sumOf(usage, 'cache_write_tokens'),
    output_tokens: sumOf(usage, 'output_tokens'),
    reasoning_tokens: sumOf(usage, 'reasoning_tokens'),
    cost_usd: unpriced.length ? null : formatUsd(knownMicro * 1_000_000n),
    cost_known_usd: formatUsd(knownMicro * 1_000_000n),
    cost_flags: unpriced.join(' '),
    breaches: breaches.length,
    dead_letters: sumOf(deadLetters, 'dead_letters'),
  };

  // Tokens per request as the window saw them (input with cache, output with reasoning), so the
  // stacked totals of harnesses with different conventions are comparable.
  const usageRows = usage.map((r) => {
    const c = USAGE_CONVENTIONS[String(r['harness']) as Harness];
    const input = num(r['input_tokens']) + (c?.inputIncludesCache ? 0 : num(r['cache_read_tokens']) + num(r['cache_write_tokens']));
    const output = num(r['output_tokens']) + (c?.outputIncludesReasoning ? 0 : num(r['reasoning_tokens']));
    return { day: r['day'], harness: r['harness'], model: r['model'], requests: num(r['requests']), tokens: input + output, cost_usd: r['cost_usd'], cost_flags: r['cost_flags'] };
  });

  const context = new Map<string, ContextSeries>();
  for (const r of contextRows) {
    const key = `${String(r['session_id'])}\u0000${String(r['agent_id'])}`;
    let s = context.get(key);
    if (s === undefined) {
      const window = num(r['window']);
      const pct = num(r['threshold_pct']);
      const headroom = num(r['headroom_tokens']);
      s = {
        session_id: String(r['session_id']), agent_id: String(r['agent_id']), harness: String(r['harness']), model: String(r['model']),
        window, threshold_pct: pct, headroom_tokens: headroom, threshold_tokens: Math.max(0, (window * pct) / 100 - headroom),
        breaches: num(r['breaches']), points: [], breach_points: [],
      };
      context.set(key, s);
    }
    s.points.push([num(r['t']), num(r['context_tokens'])]);
  }
  for (const s of context.values()) {
    if (s.points.length > CONTEXT_POINTS) {
      const step = s.points.length / CONTEXT_POINTS;
      s.points = Array.from({ length: CONTEXT_POINTS }, (_v, i) => s.points[Math.floor(i * step)] as [number, number]);
    }
  }
  for (const b of breachPoints) {
    const s = context.get(`${String(b['session_id'])}\u0000${String(b['agent_id'])}`);
    if (s) s.breach_points.push([num(b['t']), num(b['used_tokens'])]);
  }

  const models = byModel.map((r) => {
    const key = String(r['price_key'] ?? '');
    const price = key ? options.prices.table[key] : undefined;
    return {
      model: r['model'], harnesses: r['harnesses'], requests: r['requests'], cost_usd: r['cost_usd'], cost_flags: r['cost_flags'], price_key: key,
      input: price?.input ?? null, cache_read: price?.cache_read ?? null, cache_write: price?.cache_write ?? null, output: price?.output ?? null,
      price_date: price?.date ?? '', price_source: price?.source ?? '',
    };
  });

  return {
    generated_at: (options.generatedAt ?? new Date()).toISOString(),
    source: options.source ?? '',
    scope,
    headline,
    usage: usageRows,
    models,
    sessions,
    tools,
    breaches,
    dead_letters: deadLetters,
    drift,
    mcp,
    definition_costs: definitionCosts,
    discovery,
    funnel,
    context: [...context.values()],
  };
}

/** JSON safe inside a <script> element: no `</script`, no `<!--`, no U+2028/2029 surprises. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** Inlined script text: a literal `</script` would end the element early. */
const inlineScript = (source: string): string => source.replace(/<\/script/gi, '<\\/script');

/** The page for the collected data. */
export function renderHtmlReport(data: Record<string, unknown>): string {
  const css = readFileSync(join(ASSETS, 'report.css'), 'utf8');
  const app = readFileSync(join(ASSETS, 'report.js'), 'utf8');
  const template = readFileSync(join(ASSETS, 'report.html'), 'utf8');
  // Function replacers: a `$` in the inlined code must not be read as a replacement pattern.
  return template
    .replace('/*{{CSS}}*/', () => css)
    .replace('/*{{DATA}}*/', () => scriptJson(data))
    .replace('/*{{CHART_JS}}*/', () => inlineScript(chartJsSource()))
    .replace('/*{{APP_JS}}*/', () => inlineScript(app));
}

export async function buildHtmlReport(sink: ClickHouseSink, options: HtmlReportOptions): Promise<string> {
  return renderHtmlReport(await collectReportData(sink, options));
}
