// Both engines for one test file, with the same assertions (issue 34 item 2): the embedded engine
// (chdb, a data directory) and a ClickHouse server (scripts/clickhouse.sh, or
// $TOOLCANON_TEST_CLICKHOUSE_URL; see clickhouse-server.ts).
//
//   forEachEngine((engine) => {
//     describe(`replay (${engine.name})`, () => {
//       let sink: ClickHouseSink;
//       beforeAll(async () => { sink = await engine.openSink('replay'); });
//       it('…', async () => { … the same assertions on either engine … });
//     });
//   });
//
// engine.openSink(label) opens a ClickHouseSink on a fresh database of its own (a temporary data
// directory, or a new database on the server); engine.database(label) only makes one, and gives the
// CLI flags (`--db DIR` or `--clickhouse URL`) for tests that spawn the CLI. Everything an engine
// made is closed, dropped or removed in the afterAll forEachEngine registers.
//
// The embedded engine binds one data directory per process: open at most one embedded sink per
// test file (the CLI in a child process may use any number of directories).
//
// Without a server the server half is skipped with a loud banner; under CI=true it fails instead
// (requireClickHouseServerOrSkip), so CI never passes a suite that ran on one engine only.
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { ClickHouseSink, type SinkTarget } from '../../src/sink/clickhouse.ts';
import { createTestDatabase, dropTestDatabase, ensureClickHouseServer, requireClickHouseServerOrSkip } from './clickhouse-server.ts';
import { makeTempDir } from './db.ts';

export type EngineName = 'embedded' | 'server';

/** A fresh database of one engine. */
export interface EngineDatabase {
  /** What ClickHouseSink.open takes. */
  readonly target: SinkTarget;
  /** The CLI flags that name it: ['--db', DIR] or ['--clickhouse', URL]. */
  readonly flags: readonly string[];
  /** The data directory (embedded) or the database URL (server), for messages. */
  readonly where: string;
}

export interface Engine {
  readonly name: EngineName;
  /** A fresh, empty database (nothing created yet on disk for the embedded engine). */
  database(label: string): Promise<EngineDatabase>;
  /** A ClickHouseSink on a fresh database (closed in afterAll). Embedded: once per file. */
  openSink(label: string): Promise<ClickHouseSink>;
  /** A ClickHouseSink on a database made by database() (closed in afterAll). */
  open(db: EngineDatabase): Promise<ClickHouseSink>;
}

/** The environment for a CLI child: no sink target from the caller's environment. */
export function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['TOOLCANON_CLICKHOUSE_URL', 'TOOLCANON_CLICKHOUSE_USER', 'TOOLCANON_CLICKHOUSE_PASSWORD', 'TOOLCANON_CLICKHOUSE_PASSWORD_FILE', 'TOOLCANON_CLICKHOUSE_DATABASE', 'TOOLCANON_DB']) delete env[k];
  return { ...env, ...extra };
}

let serverUrl: string | null | undefined;
/** The server's base URL, or null (skip; throws under CI=true). Asked once per process. */
export async function engineServer(suite: string): Promise<string | null> {
  serverUrl ??= requireClickHouseServerOrSkip(await ensureClickHouseServer(), `${suite} (server engine)`);
  return serverUrl;
}

class EngineState implements Engine {
  private readonly sinks: ClickHouseSink[] = [];
  private readonly urls: string[] = [];
  private tmp: { dir: string; cleanup: () => void } | undefined;
  private made = 0;

  constructor(readonly name: EngineName) {}

  async database(label: string): Promise<EngineDatabase> {
    if (this.name === 'server') {
      const url = await createTestDatabase(label);
      this.urls.push(url);
      return { target: { clickhouseUrl: url }, flags: ['--clickhouse', url], where: url };
    }
    this.tmp ??= makeTempDir('engine');
    const dir = join(this.tmp.dir, `${label.replace(/[^A-Za-z0-9_-]+/g, '_')}-${++this.made}`);
    return { target: { db: dir }, flags: ['--db', dir], where: dir };
  }

  async open(db: EngineDatabase): Promise<ClickHouseSink> {
    const sink = await ClickHouseSink.open(db.target);
    this.sinks.push(sink);
    return sink;
  }

  async openSink(label: string): Promise<ClickHouseSink> {
    return this.open(await this.database(label));
  }

  async release(): Promise<void> {
    for (const sink of this.sinks.splice(0)) await sink.close().catch(() => undefined);
    for (const url of this.urls.splice(0)) await dropTestDatabase(url);
    this.tmp?.cleanup();
    this.tmp = undefined;
  }
}

/**
 * Declares the tests `body` declares once per engine, each inside a describe named after the
 * engine ('embedded', 'server'); the server's is skipped (loudly; an error under CI=true) when
 * there is no server. `suite` names the file in the skip banner. Call at the top level of a test
 * file, after `const server = await engineServer(…)`, or let it ask itself (top-level await in
 * the caller: `await forEachEngine(…)`).
 */
export async function forEachEngine(suite: string, body: (engine: Engine) => void, only?: readonly EngineName[]): Promise<void> {
  const server = await engineServer(suite);
  for (const name of only ?? (['embedded', 'server'] as const)) {
    const engine = new EngineState(name);
    describe.skipIf(name === 'server' && server === null)(name, () => {
      afterAll(async () => engine.release());
      body(engine);
    });
  }
}
