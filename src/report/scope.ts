// A report's scope (--since, --until, --harness, --host) applied to the report SQL as it is: every
// read of an analytics table becomes a read of that table's rows in scope, so the HTML report runs
// the very SQL the CLI reports run. Dead letters carry neither event time nor harness: only --host
// applies to them (the machine they came from).
import { HARNESSES, type Harness } from '../canonical/meta.ts';

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

/** Tables with an event time `ts` and a `harness` column. */
const SCOPED_TABLES = ['tool_calls', 'token_usage', 'threshold_breaches', 'mcp_events', 'mcp_server_state', 'mcp_tool_registrations', 'discovery_events'] as const;

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

const DEAD_LETTER_READ = /\b(FROM|JOIN)\s+(dead_letters)\b(\s+FINAL\b)?(\s+AS\b)?/g;

const TABLE_READ = new RegExp(`\\b(FROM|JOIN)\\s+(${SCOPED_TABLES.join('|')})\\b(\\s+FINAL\\b)?(\\s+AS\\b)?`, 'g');

/**
 * The SQL with every `FROM t [FINAL]` / `JOIN t [FINAL]` of an analytics table replaced by the
 * table's rows in scope, under the table's own name (or the alias the SQL gives it).
 */
export function applyScope(sql: string, scope: ReportScope): string {
  const where = scopeCondition(scope);
  const scoped = where === '' ? sql : sql.replace(TABLE_READ, (_all, verb: string, table: string, final: string | undefined, alias: string | undefined) =>
    `${verb} (SELECT * FROM ${table}${final ?? ''} WHERE ${where})${alias ?? ` AS ${table}`}`);
  if (scope.host === undefined) return scoped;
  const host = `host = ${sqlString(parseHost(scope.host))}`;
  return scoped.replace(DEAD_LETTER_READ, (_all, verb: string, table: string, final: string | undefined, alias: string | undefined) =>
    `${verb} (SELECT * FROM ${table}${final ?? ''} WHERE ${host})${alias ?? ` AS ${table}`}`);
}
