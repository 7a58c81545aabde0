// Flags that shape the analytics tables, shared by every command that opens the sink.
import { UsageError } from './io.ts';

/** --retention-days N (or $TOOLCANON_RETENTION_DAYS): a non-negative integer, 0 removes the retention. */
export function retentionDays(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const value = flag ?? env['TOOLCANON_RETENTION_DAYS'];
  if (value === undefined || value === '') return undefined;
  if (!/^[0-9]+$/.test(value) || Number(value) > 36_500) throw new UsageError(`--retention-days must be a whole number of days from 0 to 36500, got ${JSON.stringify(value)}`);
  return Number(value);
}

/**
 * --clickhouse URL (or $TOOLCANON_CLICKHOUSE_URL): http or https. A user or password in the URL
 * is refused on the command line, where every user of the machine can read it (`ps`,
 * /proc/PID/cmdline), and the message never repeats it; the environment may carry one.
 */
export function checkClickHouseUrl(value: string, name: string): void {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new UsageError(`${name} must be a URL such as http://localhost:8123/analytics, got ${JSON.stringify(value.includes('@') ? '(a value with @, not shown)' : value)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`${name} must use http or https, got ${JSON.stringify(u.protocol)}`);
  if (name.startsWith('--') && (u.username !== '' || u.password !== '')) {
    throw new UsageError(
      `${name} must not carry a user or password (the command line is visible to every user of this machine): ` +
        `give ${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname} and set $TOOLCANON_CLICKHOUSE_USER and $TOOLCANON_CLICKHOUSE_PASSWORD (or $TOOLCANON_CLICKHOUSE_PASSWORD_FILE)`,
    );
  }
}

/**
 * --cluster NAME (or $TOOLCANON_CLICKHOUSE_CLUSTER): the server's cluster, whose nodes all get the
 * schema (ON CLUSTER, replicated tables, a Distributed table each: src/sink/cluster.ts). A plain
 * name; only with a ClickHouse server (--clickhouse or $TOOLCANON_CLICKHOUSE_URL).
 */
export function clusterName(flag: string | undefined, clickhouse: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const fromEnv = env['TOOLCANON_CLICKHOUSE_CLUSTER'];
  const value = flag ?? (fromEnv === '' ? undefined : fromEnv);
  if (value === undefined) return undefined;
  const name = flag === undefined ? '$TOOLCANON_CLICKHOUSE_CLUSTER' : '--cluster';
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(value)) throw new UsageError(`${name} must be a cluster name (letters, digits, '_', '-', '.'), got ${JSON.stringify(value)}`);
  if ((clickhouse ?? env['TOOLCANON_CLICKHOUSE_URL'] ?? '') === '') throw new UsageError(`${name} needs a ClickHouse server (--clickhouse URL or $TOOLCANON_CLICKHOUSE_URL): the embedded engine is one node`);
  return value;
}
