// A ClickHouse server as the sink: its credentials (environment or file, never argv), which
// failures are retried, and each failure as one line without credentials.
import { ConfigError, registerSecret, secretFromEnv } from '../config/secrets.ts';

export interface ServerSettings {
  readonly username: string;
  readonly password: string;
  /** Longest a request may wait for the server to say anything (the client's socket timeout). */
  readonly timeoutMs: number;
}

export const DEFAULT_SERVER_TIMEOUT_MS = 30_000;

/**
 * User, password and timeout of a server target: `$TOOLCANON_CLICKHOUSE_USER` (default
 * `default`), `$TOOLCANON_CLICKHOUSE_PASSWORD` or the file `$TOOLCANON_CLICKHOUSE_PASSWORD_FILE`,
 * `$TOOLCANON_CLICKHOUSE_TIMEOUT_MS`. A user and password in `$TOOLCANON_CLICKHOUSE_URL` still
 * work (the environment is not argv; `--clickhouse` refuses them); the variables win.
 */
export function serverSettings(url: URL, env: NodeJS.ProcessEnv = process.env): ServerSettings {
  const fromUrl = { user: safeDecode(url.username), password: safeDecode(url.password) };
  registerSecret(fromUrl.password);
  const password = secretFromEnv('TOOLCANON_CLICKHOUSE_PASSWORD', env) ?? fromUrl.password;
  const username = env['TOOLCANON_CLICKHOUSE_USER'] || fromUrl.user || 'default';
  const rawTimeout = env['TOOLCANON_CLICKHOUSE_TIMEOUT_MS'];
  let timeoutMs = DEFAULT_SERVER_TIMEOUT_MS;
  if (rawTimeout !== undefined && rawTimeout !== '') {
    if (!/^[1-9][0-9]*$/.test(rawTimeout) || !Number.isSafeInteger(Number(rawTimeout))) {
      throw new ConfigError(`$TOOLCANON_CLICKHOUSE_TIMEOUT_MS must be a positive number of milliseconds, got ${JSON.stringify(rawTimeout)}`);
    }
    timeoutMs = Number(rawTimeout);
  }
  return { username, password, timeoutMs };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The network error code of a failure (an AggregateError of several addresses carries it too). */
function netCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; errors?: unknown; cause?: unknown } | null;
  if (typeof e?.code === 'string' && /^E[A-Z_]+$|^ERR_|CERT|SELF_SIGNED/.test(e.code)) return e.code;
  if (Array.isArray(e?.errors)) for (const inner of e.errors) {
    const c = netCode(inner);
    if (c !== undefined) return c;
  }
  if (e?.cause !== undefined && e.cause !== error) return netCode(e.cause);
  return undefined;
}

function isTimeout(error: unknown): boolean {
  return /^Timeout error\.?$/.test(String((error as Error)?.message ?? '')) || netCode(error) === 'ETIMEDOUT';
}

/** The request never reached the server: nothing can have happened there. */
function neverSent(error: unknown): boolean {
  const code = netCode(error);
  return code === 'ECONNREFUSED' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH';
}

/** The connection broke before an answer: the server may or may not have run the request. */
function brokenBeforeAnswer(error: unknown): boolean {
  const code = netCode(error);
  return code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up/i.test(String((error as Error)?.message ?? ''));
}

/**
 * Which failures of a server request are retried (RETRY_DELAYS_MS: 3 attempts, 1.5 s of waiting
 * at most), and why:
 * - refused / unreachable / temporary DNS failure, for any request: the request never reached
 *   the server, so repeating it cannot do anything twice (a server restarting answers soon);
 * - a connection reset before the answer, for idempotent requests only (queries,
 *   `CREATE … IF NOT EXISTS`, the migration bookkeeping): running them twice changes nothing.
 *   An insert is not repeated here: the caller's batch is (the worker's backoff, or a rerun),
 *   and the tables keep one copy of a row written twice;
 * - never: a timeout (the server got the request and is stuck or overloaded: waiting three times
 *   as long would not help, and the time a command can take stays one timeout), an
 *   authentication or permission error, an SQL error: repeating cannot change the answer.
 */
export function isRetryable(error: unknown, kind: RequestKind): boolean {
  if (neverSent(error)) return true;
  return kind === 'idempotent' && brokenBeforeAnswer(error);
}

/** A request that changes nothing when run twice (reads, `IF NOT EXISTS` DDL), or one that may. */
export type RequestKind = 'idempotent' | 'once';

export const RETRY_DELAYS_MS: readonly number[] = [500, 1_000];

const AUTH_CODES = new Set(['192', '193', '194', '516']);

/**
 * One line for a failure of the server at `where` (host:port), with user and password left
 * out; undefined for what is not about reaching the server (an SQL error: the caller keeps the
 * server's message, with the user's name removed).
 */
export function describeServerFailure(error: unknown, where: string, settings: Pick<ServerSettings, 'timeoutMs'>, attempts: number): string | undefined {
  const e = error as { code?: unknown; type?: unknown; message?: unknown } | null;
  const code = netCode(error);
  const message = String(e?.message ?? error);
  const tried = attempts > 1 ? `, ${attempts} attempts` : '';
  if (code === 'ECONNREFUSED') return `cannot reach the ClickHouse server at ${where} (connection refused${tried}): is it running, and is --clickhouse right?`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot reach the ClickHouse server at ${where} (its host name does not resolve${tried}): is --clickhouse right?`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `cannot reach the ClickHouse server at ${where} (no route to the host${tried}): is --clickhouse right, and is the network up?`;
  if (isTimeout(error)) {
    return `the ClickHouse server at ${where} did not answer within ${Math.round(settings.timeoutMs / 100) / 10} s: is it overloaded, or is this port not its HTTP interface (8123, or 8443 with https)? ($TOOLCANON_CLICKHOUSE_TIMEOUT_MS sets the wait)`;
  }
  if (brokenBeforeAnswer(error)) return `the ClickHouse server at ${where} closed the connection before answering${tried}: is this its HTTP port, and is it healthy? Run the command again (what is stored twice is kept once)`;
  if (code !== undefined && /CERT|SSL|TLS|EPROTO|SELF_SIGNED/.test(code)) return `TLS with the ClickHouse server at ${where} failed (${code}): is the scheme right (http:// or https://), and is the server's certificate trusted (NODE_EXTRA_CA_CERTS)?`;
  if (AUTH_CODES.has(String(e?.code)) || /AUTHENTICATION_FAILED|REQUIRED_PASSWORD|WRONG_PASSWORD|UNKNOWN_USER/.test(String(e?.type)) || /^\s*(?:401\b|Unauthorized)|Authentication failed/i.test(message)) {
    return `the ClickHouse server at ${where} refused the credentials (authentication failed): set $TOOLCANON_CLICKHOUSE_USER and $TOOLCANON_CLICKHOUSE_PASSWORD (or $TOOLCANON_CLICKHOUSE_PASSWORD_FILE) to a user of that server`;
  }
  if (String(e?.type) === 'ACCESS_DENIED' || String(e?.code) === '497') {
    return `the ClickHouse server at ${where} refused this for the configured user (not enough privileges: ${message.replace(/^[^:]*: /, '').replace(/\s*\(version [^)]*\)/, '').split('\n')[0]?.slice(0, 200)}): grant them, or use another user`;
  }
  return undefined;
}

/** Takes a user's name out of a server message (ClickHouse starts some with `<user>: `). */
export function withoutUserName(message: string, username: string): string {
  if (username === '' || username === 'default') return message;
  return message.split(`${username}: `).join('').split(username).join('<user>');
}
