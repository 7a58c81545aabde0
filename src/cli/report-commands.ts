// The reports, one declaration each: name, what `--by` takes, the help lines and how it runs.
// The command line's dispatch, `toolcanon --help`, `toolcanon report --help` and the check of
// the README's command table are derived from this list, so a new report is one entry here.
import type { ClickHouseSink } from '../sink/clickhouse.ts';
import { UsageError, type Io } from './io.ts';
import { renderRows, type OutputFormat, type Row } from './format.ts';
import {
  BREACHES_REPORT_SQL,
  DEAD_LETTERS_REPORT_SQL,
  DISCOVERY_BY_HOST_SQL,
  DISCOVERY_BY_MODEL_SQL,
  DISCOVERY_BY_TOOL_SQL,
  DISCOVERY_REPORT_GROUPINGS,
  DRIFT_REPORT_SQL,
  MCP_REPORT_SQL,
  TOOL_REPORT_GROUPINGS,
  toolsReportSql,
  type ToolReportGrouping,
} from '../report/sql.ts';
import { applyScope, parseDay, parseHarness, parseHost, SCOPE_FLAGS, type ReportScope, type ScopeFlag } from '../report/scope.ts';
import { didYouMean } from './suggest.ts';

/** The flags a report may read (already parsed by the command line). */
export interface ReportFlags {
  readonly prices?: string | undefined;
  readonly out?: string | undefined;
  readonly since?: string | undefined;
  readonly until?: string | undefined;
  readonly harness?: string | undefined;
  /** Every report: one machine's rows only. */
  readonly host?: string | undefined;
}

/** A flag a report may take besides --by. */
export type ReportFlag = ScopeFlag | 'prices' | 'out';
export const REPORT_FLAGS: readonly ReportFlag[] = [...SCOPE_FLAGS, 'prices', 'out'];

/**
 * The scope of a run from the flags, checked before any work: a flag the report does not take
 * is a usage error (never silently ignored), a bad day or harness a ScopeError (exit 2 both).
 */
export function reportScope(d: ReportDeclaration, flags: ReportFlags): ReportScope {
  const takes = d.flags ?? SCOPE_FLAGS;
  for (const f of REPORT_FLAGS) {
    if (flags[f] !== undefined && !takes.includes(f)) {
      throw new UsageError(`report ${d.name} takes no --${f}${d.refuses === undefined ? '' : ` (${d.refuses})`}${takes.length ? `; it takes ${takes.map((t) => `--${t}`).join(', ')}` : ''}`);
    }
  }
  const scope: ReportScope = {
    since: flags.since === undefined ? undefined : parseDay(flags.since, '--since'),
    until: flags.until === undefined ? undefined : parseDay(flags.until, '--until'),
    harness: flags.harness === undefined ? undefined : parseHarness(flags.harness),
    host: flags.host === undefined ? undefined : parseHost(flags.host),
  };
  if (scope.since !== undefined && scope.until !== undefined && scope.since > scope.until) throw new UsageError(`--since ${scope.since} is after --until ${scope.until}`);
  return scope;
}

/** A report's SQL with the query's scope; a table the scope cannot apply to fails (see applyScope). */
const scoped = (sql: string, q: ReportQuery): string => applyScope(sql, q.scope, { strict: true });

/**
 * What a report's rows depend on besides the tables. Kept with the rows (src/report/cache.ts):
 * the same query on unchanged tables is answered from them, and a write into the directory
 * makes the most recently asked ones again (ReportDeclaration.rows).
 */
export interface ReportQuery {
  /** The `--by` value, checked against the declaration's groupings (undefined: the default). */
  readonly by: string | undefined;
  readonly format: OutputFormat;
  /** The rows in scope (--since, --until, --harness, --host), checked by reportScope. */
  readonly scope: ReportScope;
  /** The text of the --prices file given (checked before), laid over the shipped price table. */
  readonly pricesText: string | undefined;
}

export interface ReportRun extends ReportQuery {
  readonly flags: ReportFlags;
  readonly io: Io;
  /** Opens the sink (embedded or server, from the command line's flags) for the report's queries. */
  withSink<T>(run: (sink: ClickHouseSink) => Promise<T>): Promise<T>;
}

export interface ReportDeclaration {
  readonly name: string;
  /** Values of `--by`; none: the report takes no `--by`. */
  readonly groupings?: readonly string[];
  /** Options besides `--by`, as shown in the usage line (e.g. `[--out FILE]`). */
  readonly options?: string;
  /** The flags it takes besides --by (default: every scope flag); any other is refused (exit 2). */
  readonly flags?: readonly ReportFlag[];
  /** Why it refuses the scope flags it does not take, said with the refusal. */
  readonly refuses?: string;
  /** Help lines for `toolcanon --help` (the first is also the line of `report --help`). */
  readonly help: readonly string[];
  /**
   * A report of rows: what it reads from the database (a function of the tables and the query
   * only, so they can be kept and made again), then how it prints them. The other kind runs
   * itself (`run`).
   */
  readonly rows?: (sink: ClickHouseSink, q: ReportQuery) => Promise<unknown>;
  readonly print?: (rows: unknown, q: ReportQuery, io: Io) => void;
  readonly run?: (r: ReportRun) => Promise<void>;
}

/** A report of rows (ReportDeclaration.rows and print), typed by its rows. */
function rowsReport<T>(d: Omit<ReportDeclaration, 'rows' | 'print' | 'run'> & { rows(sink: ClickHouseSink, q: ReportQuery): Promise<T>; print(rows: T, q: ReportQuery, io: Io): void }): ReportDeclaration {
  return { ...d, rows: d.rows, print: d.print as (rows: unknown, q: ReportQuery, io: Io) => void };
}

/** The price table of a query: the shipped one, with the --prices file's text laid over it. */
async function pricesOf(q: ReportQuery): Promise<import('../cost/prices.ts').PriceTable> {
  // Cost needs the price table: loaded only when asked for.
  const { PriceTable } = await import('../cost/prices.ts');
  return q.pricesText === undefined ? new PriceTable() : PriceTable.withOverridesText(q.pricesText, '--prices');
}

const printRows = (rows: Row[], q: ReportQuery, io: Io): void => io.out(renderRows(rows, q.format));

/** A report of one query, printed in the chosen format. */
function sqlReport(name: string, sql: string, help: readonly string[], more: Pick<ReportDeclaration, 'flags' | 'refuses'> = {}): ReportDeclaration {
  return rowsReport({ name, help, ...more, rows: (sink, q) => sink.queryDisplayRows(scoped(sql, q)), print: printRows });
}

export const REPORTS: readonly ReportDeclaration[] = [
  rowsReport({
    name: 'tools',
    groupings: TOOL_REPORT_GROUPINGS,
    help: ['Calls per namespace / kind / tool, errors, read-only share,', 'calls through use_tool, flagged and redacted rows, bytes'],
    rows: (sink, q) => sink.queryDisplayRows(scoped(toolsReportSql((q.by ?? 'tool') as ToolReportGrouping), q)),
    print: printRows,
  }),
  rowsReport({
    name: 'usage',
    groupings: ['session', 'day', 'model', 'host'],
    options: '[--prices FILE]',
    flags: [...SCOPE_FLAGS, 'prices'],
    help: [
      'Observed tokens per harness / model / day (or per session, day, model),',
      'by kind, beside estimates, with cost_usd from the price table (null and',
      'cost_flags when a model has no price: never counted as zero)',
    ],
    rows: async (sink, q) => {
      const { usageReportRows } = await import('../report/usage.ts');
      return usageReportRows(sink, (q.by ?? 'harness_model_day') as Parameters<typeof usageReportRows>[1], await pricesOf(q), q.scope);
    },
    print: printRows,
  }),
  sqlReport('breaches', BREACHES_REPORT_SQL, ['Sessions that crossed the context threshold: when, at what %']),
  sqlReport('drift', DRIFT_REPORT_SQL, ['Estimated (bytes/4) vs observed tokens per harness / model / content class']),
  rowsReport({
    name: 'mcp',
    options: '[--prices FILE]',
    flags: [...SCOPE_FLAGS, 'prices'],
    help: [
      'Per MCP server: share of time connected, reconnects (since when), stale',
      'disconnects, restart-policy flags, tools by visibility, what their',
      'definitions cost per request and in all (tokens, USD), calls and errors',
    ],
    rows: async (sink, q) => {
      // The definitions' cost needs the price table: loaded only here.
      const { withDefinitionCost } = await import('../report/definitions.ts');
      return withDefinitionCost(sink, await sink.queryDisplayRows(scoped(MCP_REPORT_SQL, q)), 'server', await pricesOf(q), q.scope);
    },
    print: printRows,
  }),
  rowsReport({
    name: 'discovery',
    groupings: DISCOVERY_REPORT_GROUPINGS,
    options: '[--prices FILE]',
    flags: [...SCOPE_FLAGS, 'prices'],
    help: [
      'Tool discovery: searches per turn, budget exhaustion, not-in-active-set',
      'recoveries per model; per tool: reached through search or directly, what',
      'its definition costs while visible, and whether to keep it inline',
    ],
    rows: async (sink, q) => {
      if (q.by === 'host') return { host: await sink.queryDisplayRows(scoped(DISCOVERY_BY_HOST_SQL, q)) };
      const { withDefinitionCost } = await import('../report/definitions.ts');
      // Both tables unless one is asked for; machine formats get one table (per model by default).
      const both = q.by === undefined && q.format === 'table';
      return {
        model: both || q.by !== 'tool' ? await sink.queryDisplayRows(scoped(DISCOVERY_BY_MODEL_SQL, q)) : null,
        tool: both || q.by === 'tool' ? await withDefinitionCost(sink, await sink.queryDisplayRows(scoped(DISCOVERY_BY_TOOL_SQL, q)), 'tool', await pricesOf(q), q.scope) : null,
      };
    },
    print: (tables, q, io) => {
      if ('host' in tables) {
        io.out(renderRows(tables.host, q.format));
        return;
      }
      const both = q.by === undefined && q.format === 'table';
      if (tables.model !== null) {
        if (both) io.out('Discovery per model');
        io.out(renderRows(tables.model, q.format));
      }
      if (tables.tool !== null) {
        if (both) io.out('\nDiscovery per MCP tool');
        io.out(renderRows(tables.tool, q.format));
      }
    },
  }),
  sqlReport('dead-letters', DEAD_LETTERS_REPORT_SQL, ['Dead letters per reason, with an example source'], {
    flags: ['host'],
    refuses: 'a dead letter has no event time or harness',
  }),
  {
    name: 'html',
    options: '[--out FILE] [--since DAY] [--until DAY] [--harness H] [--host H] [--prices FILE]',
    flags: [...SCOPE_FLAGS, 'out', 'prices'],
    help: [
      'One self-contained HTML page with charts: tokens and cost per day, tool',
      'calls, MCP servers, context per session, drift, a sortable sessions table',
    ],
    // Not kept: the page carries the time it was made.
    run: async (r) => {
      const { buildHtmlReport } = await import('../report/html.ts');
      const { checkOutFile, writeOutFile } = await import('./out-file.ts');
      const prices = await pricesOf(r);
      const out = r.flags.out ?? 'toolcanon-report.html';
      // Before the database is read: a folder that is not there is one line, not a stack.
      checkOutFile(out, '--out');
      const html = await r.withSink((sink) => buildHtmlReport(sink, { prices, scope: r.scope, source: sink.description }));
      writeOutFile(out, html, '--out');
      r.io.out(`Wrote ${out} (${Math.round(Buffer.byteLength(html) / 1024)} KiB): open it in a browser; it needs no network`);
    },
  },
];

/** The usage line of a report: `tools [--by tool|namespace|kind]`. */
export function reportUsageLine(d: ReportDeclaration): string {
  const parts = [d.name];
  if (d.groupings) parts.push(`[--by ${d.groupings.join('|')}]`);
  if (d.options) parts.push(d.options);
  return parts.join(' ');
}

/**
 * The report lines of `toolcanon --help` (prefix `report `) and of `toolcanon report --help`
 * (no prefix): the usage line, then the help lines, in two columns.
 */
export function reportsHelp(indent: string, column: number, prefix = 'report '): string {
  const lines: string[] = [];
  for (const d of REPORTS) {
    const head = `${indent}${prefix}${reportUsageLine(d)}`;
    const [first, ...more] = d.help;
    if (head.length < column - 1) lines.push(`${head.padEnd(column)}${first ?? ''}`);
    else lines.push(head, `${' '.repeat(column)}${first ?? ''}`);
    for (const m of more) lines.push(`${' '.repeat(column)}${m}`);
  }
  return lines.join('\n');
}

/** Finds a report by name, or a usage error listing every report. */
export function findReport(name: string | undefined): ReportDeclaration {
  const d = REPORTS.find((r) => r.name === name);
  if (d) return d;
  const names = REPORTS.map((r) => r.name);
  const suggestion = name === undefined ? '' : didYouMean(name, names);
  throw new UsageError(`unknown report ${JSON.stringify(name ?? '')}${suggestion}${suggestion ? ' (' : ': '}expected ${names.slice(0, -1).join(', ')} or ${names.at(-1) ?? ''}${suggestion ? ')' : ''}`);
}

/** Checks `--by` against the report's declaration before any work starts. */
export function checkGrouping(d: ReportDeclaration, by: string | undefined): void {
  if (by === undefined) return;
  if (!d.groupings) throw new UsageError(`report ${d.name} takes no --by`);
  if (!d.groupings.includes(by)) throw new UsageError(`--by must be one of ${d.groupings.join(', ')} for report ${d.name}, got ${JSON.stringify(by)}${didYouMean(by, d.groupings)}`);
}
