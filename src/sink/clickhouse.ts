// The ClickHouse sink: one code path for the embedded engine (chdb, the default) and a server.
import { closeSync, mkdirSync, openSync, rmSync, writevSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import type { DeadLetterRow, ToolCallRow } from '../model/records.ts';
import type { DiscoveryEventRow, DiscoveryObservation, McpEventRow, McpServerStateRow, McpToolRegistrationRow } from '../model/mcp.ts';
import type { AppliedEvent, ContextRef, EncodedBlock, ImportFileState, ImportStates, ServerFrom, Sink, ToolSince, StoredContext, ToolCallBatch, ToolCallCopyVersion, ToolCallRef } from '../model/sink.ts';
import type { BreachRow, TokenUsageRow } from '../model/usage.ts';
import { LATEST_SCHEMA_VERSION, MIGRATIONS, SCHEMA_MIGRATIONS_DDL, type TableRebuild } from './ddl.ts';
import { checkClusterName, CLUSTER_QUERY_SETTINGS, clusterCreateDatabase, clusterStatements, localTable } from './cluster.ts';
import { SCHEMA_SNAPSHOT } from './schema-snapshot.ts';
import { encodeTsv } from './tsv.ts';
import { encodeNative, nativeColumns, NativeWriter, type NativeColumn } from './native.ts';
import { assertNotBusy, assertSameDataDir, assertTablesReadable, claimEngineStart, DataDirError, describeEngineFailure, describePartsSetAside, dirIdentity, partsSetAside, prepareDataDir, withMetadataIdentity, type DirIdentity } from './datadir.ts';
import { SinkError } from './errors.ts';
import { describeTarget, resolveSinkTarget, type SinkTarget } from './target.ts';

export { DEFAULT_DB_DIR, describeTarget, resolveSinkTarget, type SinkTarget } from './target.ts';
import { MCP_EVENT_KINDS } from '../model/mcp-vocabulary.ts';
import { TABLE, TABLE_NAMES, TABLES, TOKEN_USAGE_HEADS, type AnalyticsTable, type TableNamed } from '../tables/index.ts';
import { describeServerFailure, isRetryable, RETRY_DELAYS_MS, serverSettings, withoutUserName, type RequestKind, type ServerSettings } from './server.ts';

/** The part of chdb's connection extension the sink uses: a zero-copy raw insert. */
interface ChdbRawInsert {
  rawInsert(params: { table: string; values: Buffer; format: 'TabSeparated'; columns: readonly string[]; settings: Record<string, number> }): Promise<unknown>;
}

/**
 * Insert settings. The Replacing engines would also deduplicate within each inserted block
 * (optimize_on_insert); the reports read with FINAL anyway, so that sorting work is skipped.
 * Tables are partitioned by month: a batch of events spread over more than 100 months (years of
 * logs in one import, or a few events with odd but valid dates) would fail the whole insert at
 * the default max_partitions_per_insert_block; 0 takes any number.
 */
const INSERT_SETTINGS = { optimize_on_insert: 0, max_partitions_per_insert_block: 0 } as const;
/** Largest TabSeparated body inserted inline into the embedded engine (larger: from a file). */
const INLINE_INSERT_MAX_BYTES = 1 << 20;
/** The same for @clickhouse/client, which types UInt64 settings as text. */
const CLIENT_INSERT_SETTINGS = { optimize_on_insert: 0, max_partitions_per_insert_block: '0' } as const;

/**
 * The folder of an embedded data directory where a Native block waits for the engine to read it
 * (one file per insert, removed after it; emptied when a sink opens: one process per directory).
 */
export const INSERTS_DIR = 'inserts';

/** Writes `parts` to a new file, in order (one system call for many parts). */
function writeParts(file: string, parts: readonly Buffer[]): void {
  const fd = openSync(file, 'w');
  try {
    let pending = parts.filter((p) => p.length > 0);
    while (pending.length > 0) {
      // writev takes at most IOV_MAX (1024) buffers and may write fewer bytes than asked.
      let written = writevSync(fd, pending.slice(0, 1024));
      let i = 0;
      while (i < pending.length && written >= (pending[i] as Buffer).length) written -= (pending[i++] as Buffer).length;
      pending = pending.slice(i);
      if (written > 0) pending[0] = (pending[0] as Buffer).subarray(written);
    }
  } finally {
    closeSync(fd);
  }
}

/** `s` as a single-quoted SQL string literal. */
function sqlString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * Server settings of the embedded engine, which lives in this process: caches sized for
 * analytics on one machine rather than the multi-GiB server defaults (they fill as tables are
 * read, so a long-running worker's memory would otherwise grow with its tables).
 */
const EMBEDDED_ENGINE_ARGS = [
  '--mark_cache_size=268435456',
  '--index_mark_cache_size=67108864',
  '--primary_index_cache_size=268435456',
];

/** The most bytes of one array parameter sent to a server in one query (see ClickHouseSink.inParts). */
const PARAM_PART_BYTES = 48 * 1024;
/** Values of one array parameter at most (the engine refuses an array of over 1,000,000 elements). */
const PARAM_PART_ITEMS = 100_000;

export const TOOL_CALL_COLUMNS = TABLE.tool_calls.columns;
const DEAD_LETTER_COLUMNS = TABLE.dead_letters.columns;
const TOKEN_USAGE_COLUMNS = TABLE.token_usage.columns;
const BREACH_COLUMNS = TABLE.threshold_breaches.columns;
const MCP_EVENT_COLUMNS = TABLE.mcp_events.columns;
const MCP_SERVER_STATE_COLUMNS = TABLE.mcp_server_state.columns;
/** A state row as read back (64-bit integers come as text) with its numbers as numbers. */
function numericState(r: StoredStateRow): McpServerStateRow {
  return {
    ...r,
    connected_ms: Number(r.connected_ms),
    observed_ms: Number(r.observed_ms),
    tools_changed_events: Number(r.tools_changed_events),
    backoff_ms: r.backoff_ms === null ? null : Number(r.backoff_ms),
  };
}

/**
 * The type a query parameter holding a column's values is given, from the column's declared type,
 * for the types whose values travel as text unchanged (String, a UTC DateTime64); else undefined.
 */
function paramTypeOf(declared: string | undefined): string | undefined {
  if (declared === undefined) return undefined;
  const type = declared.replace(/\s+DEFAULT\s.*$/, '').replace(/^LowCardinality\((.*)\)$/, '$1');
  return type === 'String' || type === "DateTime64(3, 'UTC')" ? type : undefined;
}

/**
 * `(a, b, …) IN` the tuples of Array(String) parameters zipped element by element: the rows of
 * the given keys (columns and parameter names in the same order).
 */
function inZipped(columns: readonly string[], params: readonly string[]): string {
  const elements = columns.map((_, i) => `tupleElement(p, ${i + 1})`).join(', ');
  return `(${columns.join(', ')}) IN (SELECT ${elements} FROM (SELECT arrayJoin(arrayZip(${params.map((n) => `{${n}:Array(String)}`).join(', ')})) AS p))`;
}

/** The element of Array(DateTime64) parameter `value` at the row's key in the zipped key parameters (as inZipped names them). */
function zippedTime(columns: readonly string[], params: readonly string[], value: string): string {
  return `{${value}:Array(DateTime64(3, 'UTC'))}[indexOf(arrayZip(${params.map((n) => `{${n}:Array(String)}`).join(', ')}), (${columns.join(', ')}))]`;
}

/** A token_usage row's accounting state as one tuple, in StateTuple's order (a NULL in it is a value). */
const STATE_TUPLE = `tuple(context_tokens, context_source, model, context_window_tokens, above_threshold, last_observed_context,
  estimated_since_observed, classes_since_observed, session_seq, ts)`;

/** STATE_TUPLE as the engine gives it back (64-bit integers as text). */
type StateTuple = [string, StoredContext['context_source'], string, string | null, boolean, string | null, string, string[], string, string];

/** The stored context of a state tuple. */
function storedContext(sessionId: string, agentId: string, s: StateTuple): StoredContext {
  const [contextTokens, contextSource, model, window, above, lastObserved, estimatedSince, classes, seq] = s;
  return {
    session_id: sessionId,
    agent_id: agentId,
    context_tokens: contextTokens,
    context_source: contextSource,
    model,
    context_window_tokens: window,
    above_threshold: above,
    last_observed_context: lastObserved,
    estimated_since_observed: estimatedSince,
    classes_since_observed: classes,
    session_seq: seq,
  };
}

/** A state row as the engine gives it back (64-bit integers as text). */
type StoredStateRow = McpServerStateRow & { backoff_ms: string | number | null; connected_ms: string | number; observed_ms: string | number; tools_changed_events: string | number };

/** Bounds of a read by event time when a server has none: before every event, after every event. */
const EPOCH = '1970-01-01 00:00:00.000';
const FAR_FUTURE = '2299-12-31 23:59:59.999';
const MCP_TOOL_REGISTRATION_COLUMNS = TABLE.mcp_tool_registrations.columns;
const DISCOVERY_EVENT_COLUMNS = TABLE.discovery_events.columns;

/** The observation columns of discovery_events (what a recomputation reads back). */
const DISCOVERY_OBSERVATION_COLUMNS = [
  'event_id', 'ts', 'harness', 'session_id', 'agent_id', 'host', 'device_id', 'turn_id', 'model', 'discovery_kind', 'tool_name', 'status',
  'query', 'result_tools', 'reported_budget_exhausted', 'refused_tool', 'recovery_query', 'called_tool', 'source', 'ingested_at',
] as const satisfies readonly (keyof DiscoveryObservation)[];

// Compile-time check that the observation columns are the observation's fields.
type Missing<T, L extends readonly (keyof T)[]> = [Exclude<keyof T, L[number]>] extends [never] ? true : never;
const observationColumnsComplete: Missing<DiscoveryObservation, typeof DISCOVERY_OBSERVATION_COLUMNS> = true;
void observationColumnsComplete;

/**
 * Every analytics table's insert columns and retention column, from the declarations in
 * src/tables/ (one file per table).
 */
export const ANALYTICS_TABLES: { readonly [T in AnalyticsTable]: { readonly columns: TableNamed<T>['columns']; readonly retentionColumn: string } } = Object.fromEntries(
  TABLES.map((t) => [t.name, { columns: t.columns, retentionColumn: t.retention }]),
) as never;

export type { AnalyticsTable };


/** The analytics tables' names, in declaration order. */
export const ANALYTICS_TABLE_NAMES: readonly AnalyticsTable[] = TABLE_NAMES;

/** The columns each insert names, per table. */
export const INSERT_COLUMNS: Readonly<Record<AnalyticsTable, readonly string[]>> = Object.fromEntries(
  ANALYTICS_TABLE_NAMES.map((t) => [t, ANALYTICS_TABLES[t].columns]),
) as unknown as Record<AnalyticsTable, readonly string[]>;


/** Where a sink writes, as its failures are described: a data directory, or a server and its settings. */
type SinkPlace =
  | { readonly kind: 'embedded'; readonly dir: string; identity?: DirIdentity }
  | { readonly kind: 'server'; readonly where: string; readonly settings: ServerSettings };

const TOOL_CALL_NATIVE = nativeColumns('tool_calls', TOOL_CALL_COLUMNS);

/** Tool-call rows encoded as a Native block of TOOL_CALL_COLUMNS as they arrive. */
class NativeToolCallBatch implements ToolCallBatch {
  readonly writer: NativeWriter;
  /** Blocks encoded by the decode thread, written after the rows added here (one insert: a Native body may hold several blocks). */
  private readonly blocks: Buffer[] = [];
  private blockRows = 0;
  private blockBytes = 0;
  constructor(sizeHint: number) {
    this.writer = new NativeWriter(TOOL_CALL_NATIVE, sizeHint);
  }
  /** The sessions of the rows: what is already stored of them is looked up on insert. */
  readonly sessions = new Set<string>();
  /** Session and event id of each row, to learn whether the batch holds two copies of one event. */
  private readonly calls = new Set<string>();
  /** True when two rows may be copies of one event (their engine then collapses them on insert). */
  repeats = false;
  private note(sessionId: string, eventId: string): void {
    this.sessions.add(sessionId);
    const key = `${sessionId}\u0000${eventId}`;
    if (this.calls.has(key)) this.repeats = true;
    else this.calls.add(key);
  }
  add(row: ToolCallRow): void {
    this.writer.row(row);
    this.note(row.session_id, row.event_id);
  }
  addBlock(block: EncodedBlock, calls: Iterable<{ readonly session_id: string; readonly event_id: string }>): void {
    for (const c of calls) this.note(c.session_id, c.event_id);
    for (const p of block.parts) {
      this.blocks.push(Buffer.from(p.buffer, p.byteOffset, p.byteLength));
      this.blockBytes += p.byteLength;
    }
    this.blockRows += block.rows;
  }
  get rows(): number {
    return this.writer.rows + this.blockRows;
  }
  get bytes(): number {
    return this.writer.byteLength + this.blockBytes;
  }
  /** The insert's body: the rows added here as one block (if any), then the encoded blocks. */
  parts(): Buffer[] {
    return this.writer.rows > 0 ? [...this.writer.parts(), ...this.blocks] : [...this.blocks];
  }
}

/** A value as a stored copy is compared with it (64-bit integers come back as text, times as ClickHouse prints them). */
function storedText(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map(storedText);
  return String(v);
}

/**
 * How an insert leaves out the rows a table already holds as well (a second replay, an import
 * run again, a Kafka redelivery): plain SQL then counts each event once, with no FINAL. A row is
 * written when no stored row with its key ranks as high; the stored rows looked at are those
 * whose `scopeColumn` (a column of the sorting key) is one of `scope`.
 */
interface StoredFilter {
  /** The columns a row is identified by (the table's sorting key). */
  readonly key: readonly string[];
  /** A row's rank as inserted: an expression over the inserted columns. */
  readonly newRank: string;
  /** The rank of a stored row: an expression over the table's columns (the same scale). */
  readonly storedRank: string;
  readonly scopeColumn: string;
  readonly scope: ReadonlySet<string>;
  /**
   * What a copy says, as one expression over columns both sides name alike: a copy that ranks as
   * high as the stored one but says something else (an export rewritten with a corrected status)
   * is written, and the later one wins as the table's version decides; one that says the same is
   * not. `storedVersion` picks the stored copy compared (the one FINAL keeps).
   */
  readonly fingerprint: string;
  readonly storedVersion: string;
  /**
   * Whether the inserted rows may hold two copies of one key: the engine then collapses them on
   * insert (optimize_on_insert, by the table's own rule), which costs ~1.5x the insert's time
   * (bench/insert-unless-stored.ts), so only such a batch pays it.
   */
  readonly repeats: boolean;
}

/**
 * tool_calls: the rank is row_version without its ingestion time (migration 10): a pending copy
 * 0, a finished one 100000 + its input and output bytes (capped at 99,999). A copy that is more
 * complete than the stored one is written (and replaces it); one that is not, is not.
 */
function toolCallsUnlessStored(sessions: ReadonlySet<string>, repeats: boolean): StoredFilter {
  return {
    repeats,
    key: ['harness', 'session_id', 'event_id'],
    newRank: "if(status = 'pending', 0, 100000 + least(input_bytes + output_bytes, 99999))",
    storedRank: 'intDiv(row_version, 10000000000000)',
    // Not the ids (the key), nor where or when it was read (source, ingested_at, host,
    // device_id): the same call read from two files or machines is one call. What toolcanon
    // makes of it is in (kind, label, read_only, meta_version: a corrected catalogue row reaches
    // stored rows on a rerun), and ts as its text (a DateTime64 stored, its text in a block).
    fingerprint: `cityHash64(status, error, raw_input, canonical_input, tool_name, model, turn_id, call_id, kind, label, read_only,
      meta_version, namespace, mcp_server, mcp_tool, via, flags, redactions, images, input_bytes, output_bytes,
      ifNull(toString(duration_ms), ''), toString(ts))`,
    storedVersion: 'row_version',
    scopeColumn: 'session_id',
    scope: sessions,
  };
}

/**
 * `SELECT columns FROM source` without the rows whose key a stored row holds at a higher rank, or
 * at the same rank saying the same (fingerprint). Rows repeated within the insert are collapsed by the table's engine on insert
 * (optimize_on_insert = 1 when the batch has repeats: the same rule as its merges).
 */
function unlessStoredSelect(table: string, names: string, source: string, f: StoredFilter, scoped = true): string {
  const key = f.key.map((c) => `\`${c}\``).join(', ');
  return `SELECT ${names} FROM ${source} AS _new
    LEFT ANY JOIN (SELECT ${key}, max(${f.storedRank}) + 1 AS _stored_rank, argMax(${f.fingerprint}, ${f.storedVersion}) AS _stored_fingerprint
                   FROM ${table} WHERE ${scoped ? `\`${f.scopeColumn}\` IN {scope:Array(String)}` : '1'} GROUP BY ${key}) AS _stored USING (${key})
    WHERE (${f.newRank}) + 1 > _stored_rank OR ((${f.newRank}) + 1 = _stored_rank AND ${f.fingerprint} != _stored_fingerprint)`;
}

export class ClickHouseSink implements Sink, ImportStates {
  /** Numbers the Native blocks written to INSERTS_DIR. */
  private insertSeq = 0;

  private constructor(
    readonly client: ClickHouseClient,
    readonly description: string,
    /** chdb's raw insert when embedded: the payload goes to the engine without a copy. */
    private readonly chdb: ChdbRawInsert | undefined,
    /** Embedded: the session that started the engine with our settings; closed last. */
    private readonly engine: { close(): void } | undefined,
    private readonly place: SinkPlace,
  ) {}

  /**
   * Opens the sink and applies the migrations. Failures a user can act on (a data directory
   * that is a file, read-only, in use by another process; a server down, refusing the
   * credentials, not answering) are a SinkError with one line naming the directory or server.
   */
  static async open(flags: SinkTarget, migrate: { fromSnapshot?: boolean; createDatabase?: boolean } = {}): Promise<ClickHouseSink> {
    const target = resolveSinkTarget(flags);
    const cluster = flags.cluster ?? (process.env['TOOLCANON_CLICKHOUSE_CLUSTER'] || undefined);
    if (cluster !== undefined && target.kind === 'embedded') throw new SinkError(`--cluster ${cluster} needs a ClickHouse server (--clickhouse URL): the embedded engine is one node`, false);
    let client: ClickHouseClient;
    let chdb: ChdbRawInsert | undefined;
    let engine: { close(): void } | undefined;
    let place: SinkPlace;
    /** What the engine did unasked as it started (see notices). */
    const startNotices: string[] = [];
    if (target.kind === 'embedded') {
      place = { kind: 'embedded', dir: target.dir };
      // Checked before the engine starts: its own messages for these are a dump on stderr.
      prepareDataDir(target.dir);
      assertNotBusy(target.dir);
      // Loaded only for the embedded engine: it maps a ~500 MB library a server target never needs.
      const [{ createChdbConnection }, { Session }] = await Promise.all([import('chdb/connection'), import('chdb')]);
      // One process at a time starts an engine on a directory (two started at once would both
      // find it free); a table definition the engine could not parse is said before it starts.
      const started = await claimEngineStart(target.dir);
      try {
        assertTablesReadable(target.dir);
        // The engine sets a damaged part aside as it starts, without a word: said in a notice.
        const setAsideBefore = partsSetAside(target.dir);
        // The first session on a directory starts the process's engine; server settings can only
        // be given then. The connection below opens a second session on the same engine.
        engine = new Session(target.dir, { connectionArgs: EMBEDDED_ENGINE_ARGS });
        startNotices.push(...describePartsSetAside(target.dir, setAsideBefore, partsSetAside(target.dir)));
      } catch (error) {
        throw ClickHouseSink.explain(error, place, 1);
      } finally {
        started();
      }
      const identity = dirIdentity(target.dir);
      if (identity !== undefined) place.identity = identity;
      try {
        // Left by a process killed during an insert: never read again.
        rmSync(join(target.dir, INSERTS_DIR), { recursive: true, force: true });
        mkdirSync(join(target.dir, INSERTS_DIR));
      } catch (error) {
        engine.close();
        throw ClickHouseSink.explain(error, place, 1);
      }
      try {
        // chdb types its Connection against @clickhouse/client-common's copy of the settings
        // types, which differ from @clickhouse/client's own copy only under
        // exactOptionalPropertyTypes; the runtime objects are the same interface.
        const connection = createChdbConnection({ path: target.dir }) as unknown as NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;
        client = createClient({ connection });
        chdb = (connection as unknown as { chdb: ChdbRawInsert }).chdb;
      } catch (error) {
        engine.close(); // a caller retrying open() must not pile up sessions
        throw ClickHouseSink.explain(error, place, 1);
      }
    } else {
      const u = new URL(target.url);
      const database = u.pathname.replace(/^\//, '') || process.env['TOOLCANON_CLICKHOUSE_DATABASE'] || 'default';
      const settings = serverSettings(u);
      place = { kind: 'server', where: u.host, settings };
      client = createClient({
        url: `${u.protocol}//${u.host}`,
        database,
        username: settings.username,
        password: settings.password,
        request_timeout: settings.timeoutMs,
        // Failures reach the caller as errors (one line each in the CLI); the client's own
        // logger would print a multi-line dump for each first.
        log: { level: ClickHouseLogLevel.OFF },
        ...(cluster === undefined ? {} : { clickhouse_settings: CLUSTER_QUERY_SETTINGS }),
      });
    }
    const sink = new ClickHouseSink(client, describeTarget(target), chdb, engine, place);
    if (cluster !== undefined) sink.cluster = checkClusterName(cluster);
    sink.notices.push(...startNotices);
    try {
      if (place.kind === 'server') await sink.ensureServerDatabase(target.kind === 'server' ? target.url : '', migrate.createDatabase !== false);
      await sink.migrate(migrate);
      // The engine makes metadata/ at its first DDL, not when it starts: its identity is taken
      // once the tables exist (the directory's own was checked around every request so far).
      if (place.kind === 'embedded' && place.identity !== undefined) place.identity = withMetadataIdentity(place.dir, place.identity);
      if (flags.retentionDays !== undefined) await sink.applyRetention(flags.retentionDays);
    } catch (error) {
      await sink.close().catch(() => undefined); // a caller retrying open() must not pile up clients
      throw error;
    }
    return sink;
  }

  /**
   * A failure as a SinkError when it is about the directory or the server (with what to do),
   * else the error itself (an SQL error keeps the engine's message, without the user's name).
   */
  private static explain(error: unknown, place: SinkPlace, attempts: number): unknown {
    if (error instanceof SinkError) return error;
    if (place.kind === 'embedded') {
      if (place.identity !== undefined) {
        try {
          assertSameDataDir(place.dir, place.identity);
        } catch (replaced) {
          return replaced;
        }
      }
      const line = describeEngineFailure(error, place.dir);
      return line === undefined ? error : new DataDirError(line, { cause: error });
    }
    const line = describeServerFailure(error, place.where, place.settings, attempts);
    if (line !== undefined) {
      const e = error as { code?: unknown; type?: unknown };
      const needsFix = e.type !== undefined || /ENOTFOUND|CERT|SSL|TLS|EPROTO/.test(String(e.code));
      return new SinkError(withoutUserName(line, place.settings.username), !needsFix, { cause: error });
    }
    if (error instanceof Error) error.message = withoutUserName(error.message, place.settings.username);
    return error;
  }

  /**
   * Runs one request. Against a server, a failure isRetryable() allows is tried again after
   * RETRY_DELAYS_MS (see there for what is retried and why; the embedded engine is in this
   * process and is never retried). The last failure is explained (see explain).
   */
  private async request<T>(kind: RequestKind, run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await run();
        // The engine reports success for writes into a data directory removed under it.
        if (this.place.kind === 'embedded' && this.place.identity !== undefined) assertSameDataDir(this.place.dir, this.place.identity);
        return result;
      } catch (error) {
        const delay = RETRY_DELAYS_MS[attempt - 1];
        if (this.place.kind === 'server' && delay !== undefined && isRetryable(error, kind)) {
          await sleep(delay);
          continue;
        }
        throw ClickHouseSink.explain(error, this.place, attempt);
      }
    }
  }

  private command(query: string | { query: string; query_params: Record<string, unknown> }, kind: RequestKind = 'idempotent'): Promise<unknown> {
    const q = typeof query === 'string' ? { query } : query;
    return this.request(kind, () => this.client.command(q));
  }

  /**
   * How many of the events read from these files (by `file:line` source) are stored already:
   * tool calls, observed usage, MCP lifecycle events and dead letters, each counted once by id.
   * Asked before a replay or import writes anything, so that a rerun (after a crash, a kill, a
   * full disk) can say what was there. One scan of the source columns.
   */
  async countStoredFromFiles(paths: readonly string[]): Promise<number> {
    if (paths.length === 0) return 0;
    const inFiles = (column: string): string => `substring(${column}, 1, length(${column}) - position(reverse(${column}), ':')) IN {paths:Array(String)}`;
    const rows = await this.queryRows<{ n: string }>({
      query: `SELECT uniqExact(t, id) AS n FROM (
          SELECT 'c' AS t, event_id AS id FROM tool_calls WHERE ${inFiles('source')}
          UNION ALL SELECT 'u', event_id FROM token_usage WHERE source = 'observed' AND ${inFiles('origin')}
          UNION ALL SELECT 'm', event_id FROM mcp_events WHERE ${inFiles('source')}
          UNION ALL SELECT 'd', dead_letter_id FROM dead_letters WHERE ${inFiles('source')})`,
      query_params: { paths: [...paths] },
    });
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Applies the migrations not yet recorded; safe to run at every start. A database with none of
   * the tables yet is created from the schema snapshot instead (one CREATE per table, the tables
   * every migration together makes: scripts/schema-snapshot.ts writes it and a test holds it equal
   * to what the migrations make), then every migration is recorded as applied: on this machine the
   * ~60 statements of the 10 migrations took ~350 ms of every new database's first command.
   * `fromSnapshot: false` runs the migrations one by one (the snapshot script, and the test).
   */
  async migrate(options: { fromSnapshot?: boolean } = {}): Promise<void> {
    await this.ddl(SCHEMA_MIGRATIONS_DDL);
    const applied = new Set(
      (await this.queryRows<{ version: number }>('SELECT version FROM schema_migrations FINAL')).map((r) => Number(r.version)),
    );
    if (applied.size === 0 && options.fromSnapshot !== false && SCHEMA_SNAPSHOT.version === LATEST_SCHEMA_VERSION && (await this.createFromSnapshot())) return;
    for (const m of MIGRATIONS) {
      if (applied.has(m.version)) continue;
      if (this.cluster !== undefined && (m.rebuilds ?? []).length > 0) throw new SinkError(`migration ${m.version} rebuilds tables, which toolcanon does not do on a cluster: create the cluster's database with this version`, false);
      // A rebuild cut short between its two renames left the table under `<table>__old`.
      for (const r of m.rebuilds ?? []) await this.resumeRebuild(r.table);
      for (const statement of m.statements) await this.ddl(statement);
      for (const r of m.rebuilds ?? []) await this.rebuild(r);
      // INSERT ... SELECT, never inline data: the embedded engine would read an inline insert's
      // data from the process's stdin when stdin is a pipe (`cat x | toolcanon replay -`).
      // Idempotent: schema_migrations keeps one row per version.
      await this.command({
        query: 'INSERT INTO schema_migrations (version, description) SELECT {version:UInt32}, {description:String}',
        query_params: { version: m.version, description: m.description },
      });
    }
  }

  /** A cluster's name when the schema is made ON CLUSTER (see cluster.ts). */
  private cluster: string | undefined;

  /** Runs a statement of the schema: as it is, or its cluster form (cluster.ts). */
  private async ddl(statement: string, kind: RequestKind = 'idempotent'): Promise<void> {
    for (const s of this.cluster === undefined ? [statement] : clusterStatements(statement, this.cluster)) await this.command(s, kind);
  }

  /**
   * A new database: the snapshot's tables, then every migration recorded (one insert, after the
   * tables: a process stopped in between leaves no record, and the migrations, each idempotent,
   * find the tables as they would make them). False, creating nothing, when one of the tables is
   * there already (a database of before schema_migrations, or one stopped mid-way): the
   * migrations bring it up to date.
   */
  private async createFromSnapshot(): Promise<boolean> {
    const names = SCHEMA_SNAPSHOT.tables.map((t) => t.name);
    const existing = await this.queryRows<{ name: string }>({
      query: 'SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN {names:Array(String)}',
      query_params: { names },
    });
    if (existing.length > 0) return false;
    for (const t of SCHEMA_SNAPSHOT.tables) await this.ddl(t.create);
    await this.command({
      query: `INSERT INTO schema_migrations (version, description)
        SELECT tupleElement(m, 1), tupleElement(m, 2) FROM (SELECT arrayJoin(arrayZip({versions:Array(UInt32)}, {descriptions:Array(String)})) AS m)`,
      query_params: { versions: MIGRATIONS.map((m) => m.version), descriptions: MIGRATIONS.map((m) => m.description) },
    });
    return true;
  }

  /**
   * Recreates a table with a new sorting key and the same columns, copies its rows, swaps it in.
   * Resumable: a crash after the old table was renamed away finds it under `<table>__old`.
   */
  private async sortingKeyOf(name: string): Promise<string | undefined> {
    const rows = await this.queryRows<{ sorting_key: string }>({ query: 'SELECT sorting_key FROM system.tables WHERE database = currentDatabase() AND name = {n:String}', query_params: { n: name } });
    return rows[0]?.sorting_key;
  }

  private async resumeRebuild(table: string): Promise<void> {
    if ((await this.sortingKeyOf(table)) === undefined && (await this.sortingKeyOf(`${table}__old`)) !== undefined) {
      await this.command(`RENAME TABLE ${table}__old TO ${table}`, 'once');
    }
  }

  private async rebuild(r: TableRebuild): Promise<void> {
    const next = `${r.table}__rebuild`;
    const old = `${r.table}__old`;
    await this.resumeRebuild(r.table);
    if ((await this.sortingKeyOf(r.table)) === r.sortingKey) return;
    await this.command(`DROP TABLE IF EXISTS ${next}`);
    await this.command(`CREATE TABLE ${next} AS ${r.table} ${r.engine}`, 'once');
    await this.command(`INSERT INTO ${next} SELECT * FROM ${r.table}`, 'once');
    await this.command(`RENAME TABLE ${r.table} TO ${old}, ${next} TO ${r.table}`, 'once');
    await this.command(`DROP TABLE ${old}`, 'once');
  }

  /**
   * Keeps rows for `days` days of event time (ClickHouse TTL: older parts are dropped in the
   * background), or removes a retention set before when `days` is 0.
   */
  async applyRetention(days: number): Promise<void> {
    for (const table of ANALYTICS_TABLE_NAMES) {
      const column = ANALYTICS_TABLES[table].retentionColumn;
      const [t] = await this.queryRows<{ ttl: string }>({
        query: "SELECT extract(create_table_query, 'TTL [^\\n]*?(?: SETTINGS|$)') AS ttl FROM system.tables WHERE database = currentDatabase() AND name = {n:String}",
        query_params: { n: this.cluster === undefined ? table : localTable(table) },
      });
      const has = (t?.ttl ?? '') !== '';
      if (days === 0) {
        if (has) await this.ddl(`ALTER TABLE ${table} REMOVE TTL`, 'once');
      } else {
        await this.ddl(`ALTER TABLE ${table} MODIFY TTL toDateTime(${column}) + toIntervalDay(${days})`);
      }
    }
  }

  /** Inserts rows as TabSeparated: through chdb's raw insert when embedded, over HTTP otherwise. */
  private async insertTsv<T>(table: string, rows: readonly T[], columns: readonly (keyof T & string)[]): Promise<void> {
    if (rows.length === 0) return;
    await this.insertTsvBody(table, encodeTsv(rows, columns), columns);
  }

  /** Inserts a TabSeparated body (rows already encoded, columns in this order). */
  private async insertTsvBody(table: string, body: Buffer, columns: readonly string[]): Promise<void> {
    if (body.byteLength === 0) return;
    // Never repeated once sent (see isRetryable); an attempt that never reached a server is, with a new stream of the body.
    await this.request('once', () => this.insertTsvBodyOnce(table, body, columns));
  }

  private async insertTsvBodyOnce(table: string, body: Buffer, columns: readonly string[]): Promise<void> {
    if (this.chdb && this.place.kind === 'embedded' && body.byteLength > INLINE_INSERT_MAX_BYTES) {
      // A large body (a dead letter of a long line) from a file the engine reads: inline, the
      // body travels inside the query text and the engine holds several copies of it (a 100 MB
      // line peaked at 1.97 GB RSS; from a file, see bench/long-line.ts).
      const file = join(this.place.dir, INSERTS_DIR, `${process.pid}-${++this.insertSeq}.tsv`);
      try {
        writeParts(file, [body]);
        const names = columns.map((c) => `\`${c}\``).join(', ');
        await this.client.command({ query: `INSERT INTO ${table} (${names}) FROM INFILE ${sqlString(file)} SETTINGS optimize_on_insert = 0, max_partitions_per_insert_block = 0 FORMAT TabSeparated` });
      } finally {
        await rm(file, { force: true }).catch(() => undefined);
      }
    } else if (this.chdb) {
      await this.chdb.rawInsert({ table, values: body, format: 'TabSeparated', columns, settings: INSERT_SETTINGS });
    } else {
      const [first, ...rest] = columns;
      if (first === undefined) throw new Error(`No columns for ${table}`);
      await this.client.insert({ table, values: Readable.from([body], { objectMode: false }), format: 'TabSeparated', columns: [first, ...rest], clickhouse_settings: CLIENT_INSERT_SETTINGS });
    }
  }

  /** Inserts rows as one Native block (see native.ts). */
  private async insertNative(table: AnalyticsTable, rows: readonly object[], columns: readonly string[]): Promise<void> {
    if (rows.length === 0) return;
    await this.insertNativeBody(table, encodeNative(table, rows, columns), columns);
  }

  /**
   * Inserts a Native block. Embedded: chdb's inline insert takes text formats only (the data
   * travels inside the query text), so the block is written to a file of the data directory's
   * `inserts/` folder that the engine reads (`FROM INFILE`) and removed after; a server gets it
   * as the body of `INSERT … FORMAT Native`. Both read the block the same way: its columns are
   * converted to the table's types on insert.
   */
  private async insertNativeBody(table: string, body: readonly Buffer[], columns: readonly string[], unless?: StoredFilter): Promise<void> {
    if (body.length === 0) return;
    const names = columns.map((c) => `\`${c}\``).join(', ');
    if (this.place.kind === 'embedded') {
      const dir = this.place.dir;
      await this.request('once', async () => {
        const file = join(dir, INSERTS_DIR, `${process.pid}-${++this.insertSeq}.native`);
        try {
          writeParts(file, body);
          await this.client.command(
            unless === undefined
              ? { query: `INSERT INTO ${table} (${names}) FROM INFILE ${sqlString(file)} SETTINGS optimize_on_insert = 0, max_partitions_per_insert_block = 0 FORMAT Native` }
              : {
                  query: `INSERT INTO ${table} (${names}) ${unlessStoredSelect(table, names, `file(${sqlString(file)}, Native)`, unless)} SETTINGS optimize_on_insert = ${unless.repeats ? 1 : 0}, max_partitions_per_insert_block = 0, join_use_nulls = 0`,
                  query_params: { scope: [...unless.scope] },
                },
          );
        } finally {
          await rm(file, { force: true }).catch(() => undefined);
        }
      });
    } else {
      const structure = nativeColumns(table, columns)
        .map((c) => `\`${c.name}\` ${c.nullable ? `Nullable(${c.wire})` : c.wire}`)
        .join(', ');
      // A batch of thousands of sessions: their list is more than a server takes in one form
      // field (see inParts), and an insert's query travels in the URL with it; the stored keys
      // are then read from the whole table (slower, the same rows left out).
      const scoped = unless !== undefined && [...unless.scope].reduce((n, v) => n + v.length + 8, 0) <= PARAM_PART_BYTES;
      await this.request('once', async () => {
        const result = await this.client.exec({
          query:
            unless === undefined
              ? `INSERT INTO ${table} (${names}) FORMAT Native`
              : `INSERT INTO ${table} (${names}) ${unlessStoredSelect(table, names, `input(${sqlString(structure)})`, unless, scoped)} FORMAT Native`,
          values: Readable.from(body, { objectMode: false }),
          ...(unless === undefined || !scoped ? {} : { query_params: { scope: [...unless.scope] } }),
          clickhouse_settings:
            unless === undefined
              ? { ...CLIENT_INSERT_SETTINGS, input_format_native_allow_types_conversion: 1 }
              : { ...CLIENT_INSERT_SETTINGS, optimize_on_insert: unless.repeats ? 1 : 0, join_use_nulls: 0, input_format_native_allow_types_conversion: 1 },
        });
        result.stream.resume();
        await finished(result.stream);
      });
    }
  }

  /** What opening did that a user should be told (one line each, e.g. a database created). */
  readonly notices: string[] = [];

  /**
   * A server's database (the URL's path, else $TOOLCANON_CLICKHOUSE_DATABASE, else `default`) is
   * created when it does not exist and `create` allows it (and said in `notices`); otherwise its
   * absence is one line. Asked through the `system` database, which every server has.
   */
  private async ensureServerDatabase(url: string, create: boolean): Promise<void> {
    const u = new URL(url);
    const database = u.pathname.replace(/^\//, '') || process.env['TOOLCANON_CLICKHOUSE_DATABASE'] || 'default';
    if (database === 'default' || this.place.kind !== 'server') return;
    const settings = this.place.settings;
    const admin = createClient({
      url: `${u.protocol}//${u.host}`,
      database: 'system',
      username: settings.username,
      password: settings.password,
      request_timeout: settings.timeoutMs,
      log: { level: ClickHouseLogLevel.OFF },
    });
    const where = `${u.protocol}//${u.host}`;
    try {
      const exists = await this.request('idempotent', async () => {
        const r = await admin.query({ query: 'SELECT count() AS n FROM system.databases WHERE name = {d:String}', query_params: { d: database }, format: 'JSONEachRow' });
        return Number((await r.json<{ n: string | number }>())[0]?.n ?? 0) > 0;
      });
      if (exists) return;
      if (!create) throw new SinkError(`no database ${database} on the ClickHouse server ${where}: run replay or import with --clickhouse ${where}/${database} first`, false);
      const statement = this.cluster === undefined ? `CREATE DATABASE IF NOT EXISTS \`${database.replace(/`/g, '``')}\`` : clusterCreateDatabase(database, this.cluster);
      await this.request('idempotent', () => admin.command({ query: statement }));
      this.notices.push(`created the database ${database} on the ClickHouse server ${where} (it did not exist)`);
    } finally {
      await admin.close();
    }
  }

  toolCallBatch(sizeHint: number): ToolCallBatch {
    return new NativeToolCallBatch(sizeHint);
  }

  toolCallBlockColumns(): readonly NativeColumn[] {
    return TOOL_CALL_NATIVE;
  }

  async writeToolCalls(batch: ToolCallBatch): Promise<void> {
    if (!(batch instanceof NativeToolCallBatch)) throw new TypeError('writeToolCalls takes a batch made by this sink (toolCallBatch)');
    if (batch.rows === 0) return;
    await this.insertNativeBody('tool_calls', batch.parts(), TOOL_CALL_COLUMNS, toolCallsUnlessStored(batch.sessions, batch.repeats));
  }

  async writeDeadLetters(rows: readonly DeadLetterRow[]): Promise<void> {
    const fresh = await this.withoutStored('dead_letters', rows, ['dead_letter_id']);
    if (fresh.length === 0) return;
    // The raw bytes go to the `raw` column as they are (a Native String: no base64 text for the
    // engine to hold and decode, and a large one is its own part of the body, not copied).
    const block = encodeNative('dead_letters', fresh, DEAD_LETTER_COLUMNS);
    await this.insertNativeBody('dead_letters', block, DEAD_LETTER_COLUMNS);
  }

  async writeTokenUsage(rows: readonly TokenUsageRow[]): Promise<void> {
    await this.insertNative('token_usage', rows, TOKEN_USAGE_COLUMNS);
  }

  async writeBreaches(rows: readonly BreachRow[]): Promise<void> {
    // A breach already stored as it is is not written again: a run killed between its breaches
    // and its token_usage rows writes the same breaches on the rerun (plain count() counted them
    // twice until a merge; test/faults/clickhouse-server-kill.test.ts).
    const key = ['session_id', 'breach_id'] as const;
    const fresh = await this.withoutStored('threshold_breaches', rows, [...key], BREACH_COLUMNS.filter((c) => c !== 'ingested_at' && !(key as readonly string[]).includes(c)));
    await this.insertNative('threshold_breaches', fresh, BREACH_COLUMNS);
  }

  async writeMcpEvents(rows: readonly McpEventRow[]): Promise<void> {
    await this.insertNative('mcp_events', rows, MCP_EVENT_COLUMNS);
  }

  mcpEventsNotStored(rows: readonly McpEventRow[]): Promise<readonly McpEventRow[]> {
    return this.withoutStored('mcp_events', rows, ['session_id', 'agent_id', 'server', 'event_id']);
  }

  async writeMcpServerStates(rows: readonly McpServerStateRow[]): Promise<void> {
    await this.insertNative('mcp_server_state', rows, MCP_SERVER_STATE_COLUMNS);
  }

  async writeMcpToolRegistrations(rows: readonly McpToolRegistrationRow[]): Promise<void> {
    const fresh = await this.withoutStored('mcp_tool_registrations', rows, ['session_id', 'server', 'snapshot_event_id', 'qualified_name']);
    await this.insertNative('mcp_tool_registrations', fresh, MCP_TOOL_REGISTRATION_COLUMNS);
  }

  /**
   * `run` over `items` in parts whose array parameters stay under a server's limit on one HTTP
   * form field (Poco's HTMLForm: 64 KiB on chdb's clickhouse-local, `http_max_field_value_size`
   * = 128 KiB on clickhouse-server; a batch's ids are several times that, and the server answers
   * "HTML Form Exception: Field value too long"). `size` is what an item adds to its largest
   * array parameter. The embedded engine takes no HTTP form: one run.
   */
  private async inParts<I, R>(items: readonly I[], size: (item: I) => number, run: (part: readonly I[]) => Promise<R[]>, partItems = PARAM_PART_ITEMS): Promise<R[]> {
    if (items.length === 0) return run(items);
    // Embedded, the parameters travel in the query text, no URL: only the engine's limit of an
    // array (1,000,000 elements: a derivation over a server with a million stored events once
    // failed with TOO_LARGE_ARRAY_SIZE) parts them.
    const embedded = this.place.kind === 'embedded';
    if (embedded && items.length <= partItems) return run(items);
    const maxBytes = embedded ? Number.POSITIVE_INFINITY : PARAM_PART_BYTES;
    const out: R[] = [];
    let start = 0;
    let bytes = 0;
    for (let i = 0; i < items.length; i++) {
      const n = size(items[i] as I) + 8; // quotes, comma, escapes of the array's text
      if (i > start && (bytes + n > maxBytes || i - start >= partItems)) {
        out.push(...(await run(items.slice(start, i))));
        start = i;
        bytes = 0;
      }
      bytes += n;
    }
    out.push(...(await run(items.slice(start))));
    return out;
  }

  /**
   * `rows` less those the table already holds (a second replay, an import run again, a Kafka
   * redelivery), so plain SQL counts each once without FINAL. A row is held when a stored row
   * has its key (the table's sorting key) and, with `compare`, equals it in those columns (the
   * latest stored copy, as FINAL reads it). Of rows repeated within `rows` (one key twice: a file
   * read twice in one run, a redelivered message in one Kafka batch) the last is kept.
   */
  private async withoutStored<T extends object>(table: AnalyticsTable, given: readonly T[], key: readonly (keyof T & string)[], compare: readonly (keyof T & string)[] = []): Promise<readonly T[]> {
    if (given.length === 0) return given;
    const keyOf = (r: Record<string, unknown>): string => key.map((c) => String(r[c])).join('\u0000');
    const last = new Map<string, T>();
    for (const r of given) {
      const k = keyOf(r as Record<string, unknown>);
      last.delete(k); // the last copy, at its own place in the order
      last.set(k, r);
    }
    const rows = last.size === given.length ? given : [...last.values()];
    const valueOf = (r: Record<string, unknown>): string => JSON.stringify(compare.map((c) => storedText(r[c])));
    const zipped = key.map((_, i) => `{k${i}:Array(String)}`).join(', ');
    const elements = key.map((_, i) => `tupleElement(p, ${i + 1})`).join(', ');
    const cols = [...new Set([...key, ...compare])].map((c) => `\`${c}\``).join(', ');
    const text = (r: T, c: keyof T & string): string => String((r as Record<string, unknown>)[c]);
    // Each key column of a type a parameter can hold is also narrowed by the set of its values,
    // so the engine reads (and FINAL merges) only the granules that can hold the keys: the tuple
    // below compares text, which no index can use (a server with a million state rows was read
    // whole for every batch).
    const declared = TABLE[table].types;
    const narrowed = key.flatMap((c, i) => {
      const type = paramTypeOf(declared[c]);
      return type === undefined ? [] : [{ c, i, type }];
    });
    const stored = await this.inParts(rows, (r) => Math.max(...key.map((c) => text(r, c).length)), (part) => {
      const params: Record<string, unknown> = {};
      key.forEach((c, i) => (params[`k${i}`] = part.map((r) => text(r, c))));
      for (const { c, i } of narrowed) params[`n${i}`] = [...new Set(part.map((r) => text(r, c)))];
      return this.queryRows<Record<string, unknown>>({
        query: `SELECT ${cols} FROM ${table} FINAL
          WHERE ${narrowed.map(({ c, i, type }) => `\`${c}\` IN {n${i}:Array(${type})} AND `).join('')}(${key.map((c) => `toString(\`${c}\`)`).join(', ')}) IN (SELECT ${elements} FROM (SELECT arrayJoin(arrayZip(${zipped})) AS p))`,
        query_params: params,
      });
    });
    const held = new Map<string, string>();
    for (const r of stored) held.set(keyOf(r), valueOf(r));
    return rows.filter((r) => held.get(keyOf(r as Record<string, unknown>)) !== valueOf(r as Record<string, unknown>));
  }

  async writeDiscoveryEvents(rows: readonly DiscoveryEventRow[]): Promise<void> {
    await this.insertNative('discovery_events', rows, DISCOVERY_EVENT_COLUMNS);
  }

  /** The stored lifecycle events of the given servers from `since` on (one copy per event id), raw text left out. */
  async loadMcpEvents(servers: readonly ServerFrom[]): Promise<McpEventRow[]> {
    if (servers.length === 0) return [];
    const rows = await this.inParts(servers, (s) => Math.max(s.sessionId.length, s.agentId.length, s.server.length) + 24, (servers) => this.queryRows<Omit<McpEventRow, 'backoff_ms'> & { backoff_ms: string | null }>({
      query: `SELECT ${MCP_EVENT_COLUMNS.filter((c) => c !== 'raw').join(', ')}, '' AS raw
        FROM mcp_events
        WHERE ${inZipped(['session_id', 'agent_id', 'server'], ['sids', 'aids', 'servers'])}
          AND ts >= ${zippedTime(['session_id', 'agent_id', 'server'], ['sids', 'aids', 'servers'], 'since')}
        ORDER BY ingested_at DESC
        LIMIT 1 BY session_id, agent_id, server, event_id`,
      query_params: { sids: servers.map((s) => s.sessionId), aids: servers.map((s) => s.agentId), servers: servers.map((s) => s.server), since: servers.map((s) => s.since ?? EPOCH) },
    }));
    return rows.map((r) => ({ ...r, backoff_ms: r.backoff_ms === null ? null : Number(r.backoff_ms) }));
  }

  async loadMcpStateHeads(servers: readonly ServerFrom[]): Promise<McpServerStateRow[]> {
    if (servers.length === 0) return [];
    // One read per server and kind, newest window first from the sorting key's end: it stops at
    // the first row (LIMIT 1 after ordering by the key in reverse reads a few granules, however
    // many windows the server has), where FINAL or a GROUP BY would read every window.
    const rows = await this.inParts(servers, (s) => s.sessionId.length + s.agentId.length + s.server.length + 24, async (part) => {
      const params: Record<string, unknown> = {};
      const reads: string[] = [];
      part.forEach((s, i) => {
        params[`s${i}`] = s.sessionId;
        params[`a${i}`] = s.agentId;
        params[`v${i}`] = s.server;
        params[`b${i}`] = s.since ?? FAR_FUTURE;
        for (const kind of MCP_EVENT_KINDS) {
          reads.push(`(SELECT ${MCP_SERVER_STATE_COLUMNS.join(', ')} FROM mcp_server_state
            WHERE session_id = {s${i}:String} AND agent_id = {a${i}:String} AND server = {v${i}:String} AND event_kind = '${kind}' AND window_start < {b${i}:DateTime64(3, 'UTC')}
            ORDER BY window_start DESC, computed_at DESC LIMIT 1)`);
        }
      });
      return this.queryRows<StoredStateRow>({ query: reads.join(' UNION ALL '), query_params: params });
    }, 30);
    return rows.map(numericState);
  }

  async loadMcpStates(servers: readonly ServerFrom[]): Promise<McpServerStateRow[]> {
    if (servers.length === 0) return [];
    const rows = await this.inParts(servers, (s) => Math.max(s.sessionId.length, s.agentId.length, s.server.length) + 24, (servers) => this.queryRows<StoredStateRow>({
      query: `SELECT ${MCP_SERVER_STATE_COLUMNS.join(', ')} FROM mcp_server_state
        WHERE ${inZipped(['session_id', 'agent_id', 'server'], ['sids', 'aids', 'servers'])}
          AND window_start >= ${zippedTime(['session_id', 'agent_id', 'server'], ['sids', 'aids', 'servers'], 'since')}
        ORDER BY computed_at DESC
        LIMIT 1 BY session_id, agent_id, server, event_kind, window_start`,
      query_params: { sids: servers.map((s) => s.sessionId), aids: servers.map((s) => s.agentId), servers: servers.map((s) => s.server), since: servers.map((s) => s.since ?? EPOCH) },
    }));
    return rows.map(numericState);
  }

  /**
   * The stored discovery rows of the given session contexts: of each event the latest computed
   * (what FINAL would give), every column, so a recomputation writes only what changed.
   */
  async loadDiscoveryObservations(contexts: readonly ContextRef[]): Promise<DiscoveryEventRow[]> {
    if (contexts.length === 0) return [];
    return this.inParts(contexts, (c) => Math.max(c.sessionId.length, c.agentId.length), (contexts) => this.queryRows<DiscoveryEventRow>({
      query: `SELECT ${DISCOVERY_EVENT_COLUMNS.join(', ')}
        FROM discovery_events
        WHERE ${inZipped(['session_id', 'agent_id'], ['sids', 'aids'])}
        ORDER BY computed_at DESC
        LIMIT 1 BY session_id, agent_id, event_id`,
      query_params: { sids: contexts.map((c) => c.sessionId), aids: contexts.map((c) => c.agentId) },
    }));
  }

  async loadDiscoveryRows(events: readonly (ContextRef & { readonly eventId: string })[], turns: readonly (ContextRef & { readonly turnId: string })[]): Promise<DiscoveryEventRow[]> {
    const latest = `ORDER BY computed_at DESC LIMIT 1 BY session_id, agent_id, event_id`;
    // By event: the sorting key. By turn: the turn_id index (migration 14) skips the granules
    // without the turn, which a session's sorting by event id scatters.
    const [byEvent, byTurn] = await Promise.all([
      events.length === 0 ? [] : this.inParts(events, (e) => Math.max(e.sessionId.length, e.agentId.length, e.eventId.length), (events) => this.queryRows<DiscoveryEventRow>({
        query: `SELECT ${DISCOVERY_EVENT_COLUMNS.join(', ')} FROM discovery_events
          WHERE ${inZipped(['session_id', 'agent_id', 'event_id'], ['sids', 'aids', 'eids'])}
          ${latest}`,
        query_params: { sids: events.map((e) => e.sessionId), aids: events.map((e) => e.agentId), eids: events.map((e) => e.eventId) },
      })),
      turns.length === 0 ? [] : this.inParts(turns, (t) => Math.max(t.sessionId.length, t.agentId.length, t.turnId.length), (turns) => this.queryRows<DiscoveryEventRow>({
        query: `SELECT ${DISCOVERY_EVENT_COLUMNS.join(', ')} FROM discovery_events
          WHERE turn_id IN {tids:Array(String)}
            AND ${inZipped(['session_id', 'agent_id', 'turn_id'], ['sids', 'aids', 'tids'])}
          ${latest}`,
        query_params: { sids: turns.map((t) => t.sessionId), aids: turns.map((t) => t.agentId), tids: turns.map((t) => t.turnId) },
      })),
    ]);
    return [...byEvent, ...byTurn];
  }

  async loadDiscoveryCalls(tools: readonly ToolSince[]): Promise<DiscoveryEventRow[]> {
    if (tools.length === 0) return [];
    return this.inParts(tools, (t) => Math.max(t.sessionId.length, t.agentId.length, t.tool.length) + 24, (tools) => this.queryRows<DiscoveryEventRow>({
      query: `SELECT ${DISCOVERY_EVENT_COLUMNS.join(', ')} FROM discovery_events
        WHERE discovery_kind = 'call'
          AND ${inZipped(['session_id', 'agent_id', 'called_tool'], ['sids', 'aids', 'tools'])}
          AND ts >= ${zippedTime(['session_id', 'agent_id', 'called_tool'], ['sids', 'aids', 'tools'], 'since')}
        ORDER BY computed_at DESC LIMIT 1 BY session_id, agent_id, event_id`,
      query_params: { sids: tools.map((t) => t.sessionId), aids: tools.map((t) => t.agentId), tools: tools.map((t) => t.tool), since: tools.map((t) => t.since) },
    }));
  }

  async loadDerivationState(derivation: string, keys: readonly string[]): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const rows = await this.inParts(keys, (k) => k.length, (keys) => this.queryRows<{ key: string; state: string }>({
      query: `SELECT key, argMax(state, computed_at) AS state FROM derivation_state
        WHERE derivation = {d:String} AND key IN {keys:Array(String)} GROUP BY key`,
      query_params: { d: derivation, keys },
    }));
    return new Map(rows.map((r) => [r.key, r.state]));
  }

  async writeDerivationState(derivation: string, states: ReadonlyMap<string, string>, computedAt: string): Promise<void> {
    const rows = [...states].map(([key, state]) => ({ derivation, key, state, computed_at: computedAt }));
    await this.insertTsv('derivation_state', rows, ['derivation', 'key', 'state', 'computed_at']);
  }

  /** Every stored copy of these tool calls with its rank (row_version), for discovery to keep the copy tool_calls keeps. */
  async loadToolCallVersions(events: readonly ToolCallRef[]): Promise<ToolCallCopyVersion[]> {
    if (events.length === 0) return [];
    return this.inParts(events, (e) => Math.max(e.harness.length, e.sessionId.length, e.eventId.length), (events) => this.queryRows<ToolCallCopyVersion>({
      query: `SELECT session_id, event_id, status, source, ingested_at, toString(row_version) AS row_version
        FROM tool_calls
        WHERE ${inZipped(['harness', 'session_id', 'event_id'], ['hs', 'sids', 'eids'])}`,
      query_params: { hs: events.map((e) => e.harness), sids: events.map((e) => e.sessionId), eids: events.map((e) => e.eventId) },
    }));
  }

  /**
   * What an importer has read of each file on one machine, by path: that machine's records, or
   * where it has none for a path, the record written before machines were told apart (device '').
   */
  async loadImportState(importer: string, deviceId = ''): Promise<Map<string, ImportFileState>> {
    const rows = await this.queryRows<{ path: string; f: [string, number, string] }>({
      query: `SELECT path, argMax(tuple(size_bytes, mtime_ms, complete_bytes), (device_id = {device:String}, imported_at)) AS f
        FROM import_files FINAL WHERE importer = {importer:String} AND device_id IN ({device:String}, '')
        GROUP BY path`,
      query_params: { importer, device: deviceId },
    });
    return new Map(rows.map((r) => [r.path, { sizeBytes: Number(r.f[0]), mtimeMs: r.f[1], completeBytes: Number(r.f[2]) }]));
  }

  async writeImportState(importer: string, files: ReadonlyMap<string, ImportFileState>, importedAt: string, deviceId = ''): Promise<void> {
    const rows = [...files].map(([path, f]) => ({ importer, device_id: deviceId, path, size_bytes: f.sizeBytes, mtime_ms: f.mtimeMs, complete_bytes: f.completeBytes, imported_at: importedAt }));
    await this.insertTsv('import_files', rows, ['importer', 'device_id', 'path', 'size_bytes', 'mtime_ms', 'complete_bytes', 'imported_at']);
  }

  /**
   * The latest applied token_usage row of each context (a session's main agent, or one of its
   * subagents): the one with the highest sequence number, i.e. the state after every event
   * applied so far, by any process (src/accounting/restore.ts rebuilds the state from it). A
   * context with no row is absent. Without FINAL (which would merge the whole table's parts on
   * every batch): of the copies of one row (its sorting key) only the latest ingested counts, as
   * the ReplacingMergeTree's version column decides, and only among those sessions.
   */
  async latestUsage(contexts: readonly ContextRef[]): Promise<StoredContext[]> {
    if (contexts.length === 0) return [];
    // Each context's highest (sequence, time, ingestion) and where that row is, from token_usage's
    // projection `heads` (migration 15: written in each part with its rows, read by key, the same
    // cost whatever the context's history; bench/restore.ts). The aggregates are the
    // projection's own (TOKEN_USAGE_HEADS), so the engine answers from it.
    const heads = await this.inParts(contexts, (c) => Math.max(c.sessionId.length, c.agentId.length), (contexts) => this.queryRows<{
      session_id: string;
      agent_id: string;
      seq: string;
      at: [string, string];
    }>({
      query: `SELECT session_id, agent_id, toString(${TOKEN_USAGE_HEADS.seq}) AS seq, ${TOKEN_USAGE_HEADS.at} AS at
        FROM token_usage
        WHERE session_id IN {sids:Array(String)}
          AND ${inZipped(['session_id', 'agent_id'], ['sids', 'aids'])}
        GROUP BY session_id, agent_id`,
      query_params: { sids: contexts.map((c) => c.sessionId), aids: contexts.map((c) => c.agentId) },
    }));
    if (heads.length === 0) return [];
    // That row, read by the table's key, is the state when the latest ingested copy of its event
    // has the highest sequence (a row written again by a re-run is stored once, as the latest
    // copy: an older copy does not count even with a higher sequence; merges keep the projection
    // as it was, so it may name a copy they removed); a context whose top row is an older or a
    // removed copy is read the full way (latestUsageByEvent). The key columns are given as sets
    // too, so the primary index narrows the read to the rows' granules.
    const stored = await this.inParts(heads, (r) => Math.max(r.session_id.length, r.agent_id.length, r.at[1].length), (heads) => this.queryRows<{
      session_id: string;
      agent_id: string;
      source: string;
      event_id: string;
      s: StateTuple;
    }>({
      query: `SELECT session_id, agent_id, source, event_id, argMax(${STATE_TUPLE}, ingested_at) AS s
        FROM token_usage
        WHERE session_id IN {sids:Array(String)} AND source IN {srcs:Array(String)} AND event_id IN {eids:Array(String)}
          AND ${inZipped(['session_id', 'agent_id', 'source', 'event_id'], ['sids', 'aids', 'srcs', 'eids'])}
        GROUP BY session_id, agent_id, source, event_id`,
      query_params: { sids: heads.map((r) => r.session_id), aids: heads.map((r) => r.agent_id), srcs: heads.map((r) => r.at[0]), eids: heads.map((r) => r.at[1]) },
    }));
    const copyKey = (sessionId: string, agentId: string, source: string, eventId: string): string => JSON.stringify([sessionId, agentId, source, eventId]);
    const rowOf = new Map(stored.map((r) => [copyKey(r.session_id, r.agent_id, r.source, r.event_id), r]));
    const out: StoredContext[] = [];
    const stale: ContextRef[] = [];
    for (const { session_id, agent_id, seq, at: [source, eventId] } of heads) {
      const r = rowOf.get(copyKey(session_id, agent_id, source, eventId));
      if (r !== undefined && r.s[8] === seq) out.push(storedContext(session_id, agent_id, r.s));
      else stale.push({ sessionId: session_id, agentId: agent_id });
    }
    if (stale.length > 0) for (const r of await this.latestUsageByEvent(stale)) out.push(r);
    return out;
  }

  /** latestUsage the full way: the latest ingested copy of each row first, then the highest sequence among them. */
  private async latestUsageByEvent(contexts: readonly ContextRef[]): Promise<StoredContext[]> {
    if (contexts.length === 0) return [];
    // The latest applied row of each context: first the latest ingested copy of each row (a
    // re-run may write a row again with another sequence number), then the row with the highest
    // sequence. Aggregations over the few columns a state needs: reading whole rows and joining
    // them held every stored row of the wanted contexts in memory at once. The state is one
    // tuple, so a NULL in it is a value, not a row an aggregate would skip.
    const rows = await this.inParts(contexts, (c) => Math.max(c.sessionId.length, c.agentId.length), (contexts) => this.queryRows<{
      session_id: string;
      agent_id: string;
      s: StateTuple;
    }>({
      query: `SELECT session_id, agent_id, argMax(row, (tupleElement(row, 9), tupleElement(row, 10))) AS s
        FROM (
          SELECT session_id, agent_id, argMax(${STATE_TUPLE}, ingested_at) AS row
          FROM token_usage
          WHERE session_id IN {sids:Array(String)}
            AND ${inZipped(['session_id', 'agent_id'], ['sids', 'aids'])}
          GROUP BY session_id, agent_id, source, event_id)
        GROUP BY session_id, agent_id`,
      query_params: {
        sids: contexts.map((c) => c.sessionId),
        aids: contexts.map((c) => c.agentId),
      },
    }));
    return rows.map((r) => storedContext(r.session_id, r.agent_id, r.s));
  }

  /**
   * Which of these events their context already applied (a token_usage row carries their id),
   * with the stored figures of an observed usage (input/output/cache read/cache write/reasoning,
   * as usageFingerprint writes them), '' for an estimate.
   */
  async appliedEvents(events: readonly (ContextRef & { readonly eventId: string })[]): Promise<AppliedEvent[]> {
    if (events.length === 0) return [];
    return this.inParts(events, (e) => Math.max(e.sessionId.length, e.eventId.length), (events) => this.queryRows<AppliedEvent>({
      query: `SELECT session_id, agent_id, event_id,
          argMax(if(source = 'observed', concat(toString(input_tokens), '/', toString(output_tokens), '/', ifNull(toString(cache_read_tokens), ''), '/',
                                                ifNull(toString(cache_write_tokens), ''), '/', ifNull(toString(reasoning_tokens), '')), ''), ingested_at) AS figures
        FROM token_usage
        WHERE session_id IN {sids:Array(String)} AND event_id IN {ids:Array(String)}
        GROUP BY session_id, agent_id, event_id`,
      query_params: { sids: [...new Set(events.map((e) => e.sessionId))], ids: [...new Set(events.map((e) => e.eventId))] },
    }));
  }

  /**
   * The tables' definitions as the engine prints them (system.tables), without the database
   * name and with IF NOT EXISTS, by name: what the schema snapshot keeps (schema_migrations and
   * any table whose name starts with `_` left out).
   */
  async tableDefinitions(): Promise<{ name: string; create: string }[]> {
    const rows = await this.queryRows<{ name: string; create: string }>(
      "SELECT name, create_table_query AS create FROM system.tables WHERE database = currentDatabase() AND name != 'schema_migrations' AND NOT startsWith(name, '_') ORDER BY name",
    );
    return rows.map((r) => {
      const head = /^CREATE TABLE (?:`?[^\s.`]+`?\.)?`?([^\s`(]+)`? /.exec(r.create);
      if (head?.[1] !== r.name) throw new Error(`Unexpected definition of table ${r.name}: ${r.create.slice(0, 80)}`);
      return { name: r.name, create: `CREATE TABLE IF NOT EXISTS ${r.name} ${r.create.slice(head[0].length)}` };
    });
  }

  /** Runs a query and returns its rows (64-bit integers as strings, so they stay exact). */
  async queryRows<T>(query: string | { query: string; query_params: Record<string, unknown> }): Promise<T[]> {
    const q = typeof query === 'string' ? { query } : query;
    return this.request('idempotent', async () => {
      const result = await this.client.query({
        ...q,
        format: 'JSONEachRow',
        clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
      });
      return result.json<T>();
    });
  }

  /**
   * Runs a query for display: rows as objects whose 64-bit integer columns are numbers where
   * they fit a double exactly (|v| <= 2^53), decimal strings beyond (JSON readers lose precision
   * past 2^53). The column types come with the result, so a String column of digits stays text.
   */
  async queryDisplayRows(query: string, settings: { readonly final?: 0 | 1 } = {}): Promise<Record<string, unknown>[]> {
    // A user's query may write (INSERT … SELECT): retried only when it never reached the server.
    const [names, types, ...rows] = await this.request('once', async () => {
      const result = await this.client.query({ query, format: 'JSONCompactEachRowWithNamesAndTypes', clickhouse_settings: { ...settings, output_format_json_quote_64bit_integers: 1 } });
      return result.json<unknown[]>();
    });
    const cols = (names ?? []) as string[];
    const wide = ((types ?? []) as string[]).map((t) => /^(?:Nullable\()?(?:LowCardinality\()?U?Int(?:64|128|256)\)*$/.test(t));
    return rows.map((row) =>
      Object.fromEntries(
        cols.map((c, i) => {
          const v = row[i];
          if (wide[i] && typeof v === 'string' && /^-?[0-9]+$/.test(v)) {
            const b = BigInt(v);
            return [c, b <= 9007199254740992n && b >= -9007199254740992n ? Number(b) : v];
          }
          return [c, v];
        }),
      ),
    );
  }

  async close(): Promise<void> {
    try {
      await this.client.close();
    } finally {
      this.engine?.close();
    }
  }
}
