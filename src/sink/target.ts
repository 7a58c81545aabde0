// Where a command's data goes (a ClickHouse server, or the embedded engine's data directory) and
// how it is named on screen. Apart from the sink (clickhouse.ts), so that a command can tell where
// without loading the ClickHouse client.
import { resolve } from 'node:path';

export const DEFAULT_DB_DIR = '.toolcanon/db';

export interface SinkTarget {
  /** Data directory of the embedded engine. */
  readonly db?: string | undefined;
  /** URL of a ClickHouse server (http[s]://host:port[/database]); wins over `db`. */
  readonly clickhouseUrl?: string | undefined;
  /** Keep this many days of event time (0 removes a retention set before); unset leaves it as is. */
  readonly retentionDays?: number | undefined;
  /** A server's cluster (or $TOOLCANON_CLICKHOUSE_CLUSTER): the schema made ON CLUSTER, replicated and distributed (cluster.ts). */
  readonly cluster?: string | undefined;
}

/** Where the data goes, from flags first, then the environment, then the embedded default. */
export function resolveSinkTarget(flags: SinkTarget, env: NodeJS.ProcessEnv = process.env): { kind: 'server'; url: string } | { kind: 'embedded'; dir: string } {
  const url = flags.clickhouseUrl ?? env['TOOLCANON_CLICKHOUSE_URL'];
  if (url) return { kind: 'server', url };
  return { kind: 'embedded', dir: resolve(flags.db ?? env['TOOLCANON_DB'] ?? DEFAULT_DB_DIR) };
}

/** A description of the target safe to print: never user or password. */
export function describeTarget(target: ReturnType<typeof resolveSinkTarget>): string {
  if (target.kind === 'embedded') return `embedded ClickHouse at ${target.dir}`;
  const u = new URL(target.url);
  return `ClickHouse server ${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
}

