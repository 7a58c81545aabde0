// `toolcanon serve [--db DIR] [--port N]`: own an embedded data directory without watching
// anything (src/serve/owner.ts), for other toolcanon commands, dashboards and any ClickHouse
// client, until SIGINT or SIGTERM.
import { resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ClickHouseSink, DEFAULT_DB_DIR } from '../sink/clickhouse.ts';
import { holdsDatabase } from '../sink/datadir.ts';
import { startOwner } from '../serve/owner.ts';
import { parseArgsUsageError } from './suggest.ts';
import { UsageError, type Io } from './io.ts';
import { OUTPUT_FORMATS, renderRows } from './format.ts';

export const SERVE_USAGE = `Usage: toolcanon serve [--db DIR] [--port N] [--unguarded-engine] [--format table|json|csv]

Owns an embedded data directory and serves it while it runs, without watching anything: every
other toolcanon command given that directory (report, query, report html, export, replay,
import, statusline) reads and writes through it instead of failing on the engine's lock; any
ClickHouse client reaches the tables through ClickHouse's own HTTP interface; a browser gets the
HTML report at / (it reloads itself when the tables change). Everything listens on 127.0.0.1
only, and every request must carry the token kept in DIR/toolcanon.token (mode 0600, readable
by the directory's owner only): as X-ClickHouse-Key, Authorization: Bearer, or the password of
basic auth (any user). The engine itself (clickhouse-local, which checks no credential) runs in
a network namespace of its own (unshare), reachable only through a Unix socket of mode 0600 in
DIR; where no namespace can be made, serve refuses to start. A directory without a database gets
one (empty). Ctrl-C or SIGTERM stops it (exit 0).

Options:
  --db DIR                   Embedded ClickHouse data directory (default .toolcanon/db, or $TOOLCANON_DB)
  --port N                   The port on 127.0.0.1 (default: a free one; printed)
  --unguarded-engine         Where no network namespace can be made (no unshare, not Linux): run
                             the engine on this machine's 127.0.0.1 anyway, where ANY local
                             process can read and write the tables without the token
  --format table|json|csv    How the address is printed (json: one object)

Example:
  toolcanon serve --db ~/.toolcanon/db --port 8124
  curl -H "X-ClickHouse-Key: $(cat ~/.toolcanon/db/toolcanon.token)" 'http://127.0.0.1:8124/?query=SELECT+count()+FROM+tool_calls'`;

const OPTIONS = {
  db: { type: 'string' },
  port: { type: 'string' },
  'unguarded-engine': { type: 'boolean', default: false },
  format: { type: 'string', default: 'table' },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

export async function runServeCommand(args: readonly string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw parseArgsUsageError(error, OPTIONS, 'serve');
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(SERVE_USAGE);
    return 0;
  }
  if (positionals.length) throw new UsageError(`serve takes no argument, got ${JSON.stringify(positionals[0])} (the directory is --db DIR)`);
  if (!(OUTPUT_FORMATS as readonly string[]).includes(values.format)) throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}, got ${JSON.stringify(values.format)}`);
  const port = values.port === undefined ? 0 : Number(values.port);
  if (values.port !== undefined && (!/^[0-9]+$/.test(values.port) || port > 65535)) throw new UsageError(`--port must be a port number from 0 (a free one) to 65535, got ${JSON.stringify(values.port)}`);
  const dir = resolve(values.db ?? process.env['TOOLCANON_DB'] ?? DEFAULT_DB_DIR);
  const existed = holdsDatabase(dir) === true;

  let engineStopped: ((line: string) => void) | undefined;
  const stopped = new Promise<string | undefined>((done) => {
    engineStopped = done;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => done(undefined));
  });
  const owner = await startOwner(dir, { port, command: 'toolcanon serve', unguardedEngine: values['unguarded-engine'], onEngineExit: (line) => engineStopped?.(line) });
  try {
    // The tables (an empty database for a new directory; migrations for an older one).
    const sink = await ClickHouseSink.open({ clickhouseUrl: owner.clickhouseUrl });
    await sink.close();
  } catch (error) {
    await owner.close();
    throw error;
  }
  io.err(`database: embedded ClickHouse at ${dir}${existed ? '' : ' (new, empty)'}; served by process ${process.pid} (engine ${owner.enginePid}), started in ${owner.startMs} ms`);
  if (!owner.isolated) io.err('toolcanon: WARNING: --unguarded-engine: the engine listens on 127.0.0.1 without a network namespace of its own; any local process that finds its port can read and write the tables without the token');
  if (values.format === 'table') {
    io.out(`url: ${owner.url}  (ClickHouse HTTP API; the live report at /)`);
    io.out(`token: in ${owner.tokenFile}  (X-ClickHouse-Key, Authorization: Bearer, or basic auth password)`);
    io.out(`browser: open "${owner.url}/?token=$(cat ${owner.tokenFile})"`);
    io.out(`other commands: toolcanon report usage --db ${dir}  (read through this process); Ctrl-C stops it`);
  } else {
    io.out(renderRows([{ url: owner.url, token_file: owner.tokenFile, owner_file: owner.ownerFile, data_dir: dir, pid: process.pid, engine_pid: owner.enginePid, engine_isolated: owner.isolated, start_ms: owner.startMs }], values.format as 'json' | 'csv'));
  }
  const failure = await stopped;
  await owner.close();
  if (failure !== undefined) {
    io.err(`toolcanon: ${failure}`);
    return 1;
  }
  io.err(`stopped serving ${dir}`);
  return 0;
}
