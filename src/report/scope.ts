// A report's scope (--since, --until, --harness, --host) applied to the report SQL as it is: every
// read of an analytics table becomes a read of that table's rows in scope, so the HTML report runs
// the very SQL the CLI reports run. Dead letters carry neither event time nor harness: only --host
// applies to them (the machine they came from).
import { HARNESSES, type Harness } from '../canonical/meta.ts';
import { TABLE, TABLES, type AnalyticsTable } from '../tables/index.ts';

/** A scope flag with a value it cannot take (the command line reports it as a usage error). */
export class ScopeError extends Error {
  override readonly name = 'ScopeError';
}

export interface ReportScope {
  /** First day included, YYYY-MM-DD (UTC). */
  readonly since?: string | undefined;
  /** Last day included, YYYY-MM-DD (UTC). */
  readonly until?: string | undefined;
  readonly harness?: Harness | undefined;
  /** One machine only (the rows' `host`; '' is the rows of no known machine). */
  readonly host?: string | undefined;
}

/** The scope flags, as the command line names them. */
export const SCOPE_FLAGS = ['since', 'until', 'harness', 'host'] as const;
export type ScopeFlag = (typeof SCOPE_FLAGS)[number];

/**
 * How each analytics table is scoped: its declaration's `scope` (src/tables/): `event` tables
 * have an event time `ts`, a `harness` and a `host` (every flag applies); `host` tables only a
 * `host` (dead letters: no event time, no harness). A declaration cannot name a scope its
 * columns do not allow (src/tables/table.ts), so no table goes unscoped.
 */
const tablesScoped = (kind: 'event' | 'host'): string[] => TABLES.filter((t) => t.scope === kind).map((t) => t.name);
const EVENT_TABLES = tablesScoped('event');
const HOST_ONLY_TABLES = tablesScoped('host');

/** The flags a table of each kind honours. */
const FLAGS_OF: Readonly<Record<'event' | 'host', readonly ScopeFlag[]>> = { event: SCOPE_FLAGS, host: ['host'] };

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A YYYY-MM-DD day, checked (a real calendar day), or an error naming the flag. */
export function parseDay(value: string, flag: string): string {
  const m = DAY.exec(value);
  const d = m ? new Date(`${value}T00:00:00Z`) : undefined;
  if (!m || d === undefined || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value) {
    throw new ScopeError(`${flag} must be a day as YYYY-MM-DD, got ${JSON.stringify(value)}`);
  }
  return value;
}

export function parseHarness(value: string): Harness {
  if ((HARNESSES as readonly string[]).includes(value)) return value as Harness;
  throw new ScopeError(`--harness must be one of ${HARNESSES.join(', ')}, got ${JSON.stringify(value)}`);
}

function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

/** A ClickHouse string literal of any text (backslashes and quotes escaped). */
export function sqlString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

export function parseHost(value: string): string {
  if (value.length > 256) throw new ScopeError(`--host must be at most 256 characters, got ${value.length}`);
  return value;
}

/** The WHERE condition of a scope (values are checked above, so they are safe to inline), or ''. */
export function scopeCondition(scope: ReportScope): string {
  const parts: string[] = [];
  if (scope.since !== undefined) parts.push(`ts >= toDateTime64('${parseDay(scope.since, '--since')} 00:00:00', 3, 'UTC')`);
  if (scope.until !== undefined) parts.push(`ts < toDateTime64('${nextDay(parseDay(scope.until, '--until'))} 00:00:00', 3, 'UTC')`);
  if (scope.harness !== undefined) parts.push(`harness = '${parseHarness(scope.harness)}'`);
  if (scope.host !== undefined) parts.push(`host = ${sqlString(parseHost(scope.host))}`);
  return parts.join(' AND ');
}

const tableRead = (tables: readonly string[]): RegExp => new RegExp(`\\b(FROM|JOIN)\\s+(${tables.join('|')})\\b(\\s+FINAL\\b)?(\\s+AS\\b)?`, 'g');
const TABLE_READ = tableRead(EVENT_TABLES);
const HOST_ONLY_READ = tableRead(HOST_ONLY_TABLES);
const ANY_READ = tableRead(TABLES.map((t) => t.name));

/** The scope flags every analytics table `sql` reads honours (all four when it reads none). */
export function scopeFlagsOf(sql: string): ScopeFlag[] {
  let flags: readonly ScopeFlag[] = SCOPE_FLAGS;
  for (const m of sql.matchAll(ANY_READ)) {
    const honoured = FLAGS_OF[TABLE[m[2] as AnalyticsTable].scope];
    flags = flags.filter((f) => honoured.includes(f));
  }
  return [...flags];
}

/** The flags set in a scope. */
export function flagsOf(scope: ReportScope): ScopeFlag[] {
  return SCOPE_FLAGS.filter((f) => scope[f] !== undefined);
}

/**
 * The SQL with every `FROM t [FINAL]` / `JOIN t [FINAL]` of an analytics table replaced by the
 * table's rows in scope, under the table's own name (or the alias the SQL gives it).
 */
export function applyScope(sql: string, scope: ReportScope, options: { readonly strict?: boolean } = {}): string {
  if (options.strict === true) {
    // A report that takes a flag must honour it in every table it reads: a table the flag cannot
    // scope is a mistake in the report's declaration (a test runs every report with every flag).
    const honoured = scopeFlagsOf(sql);
    const ignored = flagsOf(scope).filter((f) => !honoured.includes(f));
    if (ignored.length) throw new Error(`a report's SQL cannot honour --${ignored.join(', --')}: it reads ${[...new Set([...sql.matchAll(ANY_READ)].map((m) => m[2]))].join(', ')}`);
  }
  const where = scopeCondition(scope);
  const scoped = where === '' ? sql : sql.replace(TABLE_READ, (_all, verb: string, table: string, final: string | undefined, alias: string | undefined) =>
    `${verb} (SELECT * FROM ${table}${final ?? ''} WHERE ${where})${alias ?? ` AS ${table}`}`);
  if (scope.host === undefined) return scoped;
  const host = `host = ${sqlString(parseHost(scope.host))}`;
  return scoped.replace(HOST_ONLY_READ, (_all, verb: string, table: string, final: string | undefined, alias: string | undefined) =>
    `${verb} (SELECT * FROM ${table}${final ?? ''} WHERE ${host})${alias ?? ` AS ${table}`}`);
}
