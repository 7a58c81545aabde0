// The toolcanon command line: replay, validate, report, query, catalogue.
import { existsSync, readFileSync } from 'node:fs';
import { redactionFromEnv } from '../redact/env.ts';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { DecodeLimits, Machine } from '../decode/event.ts';
import { DEFAULT_LIMITS } from '../decode/limits.ts';
import { emptyCounts, type PipelineCounts } from '../pipeline/counts.ts';
import type { ClickHouseSink } from '../sink/clickhouse.ts';
import { describeTarget, resolveSinkTarget } from '../sink/target.ts';
import { holdsDatabase } from '../sink/datadir.ts';
import { dropReportCache, keptKeys, readReportCache, reportCacheEnabled, writeReportCache, type ReportCacheKey } from '../report/cache.ts';
import { InputError, leaveTornLastLines, listInputFiles, openInput, readLines, tornLinesLine } from '../source/file.ts';
import { accountingConfig } from './accounting-flags.ts';
import { checkClickHouseUrl, clusterName, retentionDays } from './sink-flags.ts';
import { UsageError, type Io } from './io.ts';
import { OUTPUT_FORMATS, renderRows, type OutputFormat, type Row } from './format.ts';
import { createProgressBar } from './progress.ts';
import { rateRows, storedRows } from './summary.ts';
import { checkGrouping, findReport, REPORTS, reportScope, reportsHelp, type ReportQuery } from './report-commands.ts';
import { ScopeError } from '../report/scope.ts';
import { didYouMean, parseArgsUsageError } from './suggest.ts';
import { describeQueryError, QueryError } from './query-error.ts';
import { OutFileError } from './out-file.ts';
import { IMPORTER_IDS, type Importer } from '../importers/types.ts';
import { isImporterId, loadImporter } from '../importers/registry.ts';
import type { ImportSummary } from '../pipeline/import.ts';
import { dropImportMirrors, unchangedSinceMirror, writeImportMirror } from '../pipeline/import-mirror.ts';
import { importProblem } from '../pipeline/import-verdict.ts';
import { ConfigError, scrubSecrets } from '../config/secrets.ts';
import { describeKafkaFailure } from '../kafka/errors.ts';
import { SinkError } from '../sink/errors.ts';
import { existingDatabase, NoDatabaseError, sinkTarget } from './database.ts';
import { alreadyStoredLine, storedBeforeImport, storedBeforeReplay, withAlreadyStored } from './resume.ts';
import { INTERRUPTED_EXIT_CODE, Interrupted, interruptedLine, interruptible, stdinOf } from './interrupt.ts';

const USAGE = `Usage: toolcanon <command> [options]

Commands:
  replay <paths…|->          Replay JSONL events (files, directories of *.jsonl, or - for stdin)
                             into ClickHouse and print a summary
  import <${IMPORTER_IDS.join('|')}> [paths…]
                             Import the logs a harness already writes (default: its usual folder);
                             incremental: unchanged files are skipped, grown files add what is new
  import all                 Import every harness whose default folder exists, in one process
  watch <harness…|all> [paths…]
                             Follow the harnesses' logs as they are written (import, live) until
                             SIGTERM / Ctrl-C; --to-kafka publishes instead
  statusline                 Claude Code's status line: reads its JSON on stdin, prints model,
                             context used of the window against the threshold, session and day cost
  validate <paths…|->        Check events without writing; one line per bad event; exit 1 if any
${reportsHelp('  ', 29)}
  query "<SQL>"              Run SQL against the analytics tables
  consume --brokers H:P --topic T [--group G]
                             Stream worker: consume events from Kafka into ClickHouse
  produce <paths…> --brokers H:P --topic T
                             Publish JSONL events to Kafka, keyed by session_id
  export otlp --endpoint URL [--since DAY] [--until DAY] [--harness H] [--include-raw-input]
                             Replay what is stored as OTLP/HTTP traces (GenAI semantic conventions
                             v1.41.0); --protocol http/protobuf|http/json
  serve [--db DIR] [--port N]
                             Own an embedded data directory and serve it on 127.0.0.1 behind the
                             token in DIR/toolcanon.token: other commands read through it,
                             ClickHouse clients query it, / is the live HTML report
  catalogue                  Print the tool catalogue (Markdown table)

Options:
  --format table|json|csv    Output format (json = one object per line); default table
  --db DIR                   Embedded ClickHouse data directory (default .toolcanon/db, or $TOOLCANON_DB)
  --clickhouse URL           Write to a ClickHouse server instead (or $TOOLCANON_CLICKHOUSE_URL;
                             user and password from $TOOLCANON_CLICKHOUSE_USER / _PASSWORD or
                             _PASSWORD_FILE, never on the command line; $TOOLCANON_CLICKHOUSE_TIMEOUT_MS)
  --cluster NAME             The server's cluster: tables made ON CLUSTER, replicated, written and read
                             through a Distributed table each (or $TOOLCANON_CLICKHOUSE_CLUSTER)
  --threshold-pct N          Context threshold for breaches, percent (default 85)
  --headroom-tokens N        Headroom: moves the trigger earlier by N tokens (default 0)
  --models FILE              JSON { "model": contextWindowTokens } laid over the shipped table
  --prices FILE              JSON { "model": { input, cache_read, cache_write, output, … } } in USD per
                             million tokens, laid over the shipped price table (report usage / html)
  --max-event-bytes N        Largest accepted event (default ${DEFAULT_LIMITS.maxEventBytes})
  --max-depth N              Deepest accepted JSON nesting (default ${DEFAULT_LIMITS.maxDepth})
  --retention-days N         Keep N days of event time in every table (ClickHouse TTL; 0 removes it;
                             or $TOOLCANON_RETENTION_DAYS); unset leaves the tables as they are
  --no-redact                Store inputs verbatim, secrets included (or TOOLCANON_REDACT=0); default:
                             API keys, tokens, passwords and private keys become [REDACTED:kind:hash]
  --no-progress              Never draw a progress bar
  -h, --help                 Show this help
  -V, --version              Print toolcanon's version
`;

const SINK_FLAGS = `  --db DIR                   Embedded ClickHouse data directory (default .toolcanon/db, or $TOOLCANON_DB)
  --clickhouse URL           A ClickHouse server instead (http[s]://host:port[/database], or $TOOLCANON_CLICKHOUSE_URL)
  --cluster NAME             The server's cluster (ON CLUSTER DDL; or $TOOLCANON_CLICKHOUSE_CLUSTER)
  --format table|json|csv    Output format (default table; json = one object per line)`;

const ACCOUNTING_FLAGS = `  --threshold-pct N          Context threshold for breaches, percent (default 85)
  --headroom-tokens N        Moves the trigger earlier by N tokens (default 0)
  --models FILE              JSON { "model": contextWindowTokens } laid over the shipped table
  --retention-days N         Keep N days of event time in every table (0 removes it)`;

/** `toolcanon <command> --help`: the command's own usage, flags with defaults, and an example. */
const COMMAND_HELP: Readonly<Record<string, string>> = {
  replay: `Usage: toolcanon replay <paths…|-> [options]

Replays JSONL envelope events (files, directories of *.jsonl, or - for stdin) into ClickHouse
and prints a summary. Exits 1 when most events (or all) were dead letters, which is what
pointing it at files that are not toolcanon events looks like, unless --allow-dead-letters.

Options:
${SINK_FLAGS}
${ACCOUNTING_FLAGS}
  --max-event-bytes N        Largest accepted event (default ${DEFAULT_LIMITS.maxEventBytes})
  --max-depth N              Deepest accepted JSON nesting (default ${DEFAULT_LIMITS.maxDepth})
  --allow-dead-letters       Exit 0 even when most events were dead letters
  --no-redact                Store secrets verbatim (default: redacted; or TOOLCANON_REDACT=0)
  --no-progress              Never draw a progress bar
  --complete                 The files are complete: read a last line that has no newline too.
                             Without it that line is left unread (a file still being written,
                             as import does; the summary counts it); stdin is read to its end

Example:
  toolcanon replay fixtures/ && toolcanon report tools
  cat events.jsonl | toolcanon replay - --db /tmp/tc`,
  import: `Usage: toolcanon import <${IMPORTER_IDS.join('|')}|all> [paths…] [options]

Imports the logs a harness already writes (default: its usual folder). Incremental: unchanged
files are skipped, grown files add what is new. \`import all\` imports every harness whose
default folder exists, one after the other in one process (one start-up, one engine open), and
prints each one's summary with an importer column. Exits 1 when the files read held no event of
that harness (another harness's logs?) or most records were malformed, unless --allow-dead-letters.

Options:
${SINK_FLAGS}
${ACCOUNTING_FLAGS}
  --allow-dead-letters       Exit 0 even when nothing was recognised
  --no-redact                Store secrets verbatim (default: redacted; or TOOLCANON_REDACT=0)
  --no-progress              Never draw a progress bar
  --host NAME                This machine's name on every row of an event that names none
                             (default os.hostname(), or $TOOLCANON_HOST)
  --device-id ID             A stable id of this machine (default: derived from /etc/machine-id,
                             else created once in the state directory; or $TOOLCANON_DEVICE_ID)
  --to-kafka                 Publish the events to Kafka instead of writing a database (a consume
                             worker writes the warehouse): --brokers H:P[,…] --topic T
                             [--dlq-topic T] [--partitions N (default 6, for a topic it creates)]
  --state-dir DIR            --to-kafka: what was read of each file, and a created device id
                             (default ~/.toolcanon/import-state, or $TOOLCANON_IMPORT_STATE)

Example:
  toolcanon import claude-code            # ~/.claude/projects
  toolcanon import all                    # every harness found in its default folder
  toolcanon import claude-code --to-kafka --brokers kafka:9092 --topic tool-events
  toolcanon import codex ~/.codex/sessions/2026/12`,
  validate: `Usage: toolcanon validate <paths…|-> [--format table|json|csv]

Checks events without writing anything: one line per invalid event (file:line: reason: detail),
flagged events as warnings. Exits 1 if any event is invalid.

Example:
  toolcanon validate fixtures/bad/`,
  report: `Usage: toolcanon report <${REPORTS.map((r) => r.name).join('|')}> [options]

${reportsHelp('  ', 29, '')}

Options:
${SINK_FLAGS}
  --prices FILE              JSON { "model": { input, cache_read, cache_write, output, reasoning? } },
                             USD per million tokens, laid over the shipped price table
  --out FILE                 html: where to write the page (default toolcanon-report.html; its
                             folder must exist)
  --since DAY, --until DAY   first and last day included, YYYY-MM-DD (UTC)
  --harness H                one harness only
  --host H                   one machine's rows only (the rows' host; '' = unknown)
                             Every report honours these four, except dead-letters: --host only (a
                             dead letter has no event time or harness); a flag a report does not
                             take exits 2. The database must exist (run replay or import first).
                             Asked again on an embedded database whose tables have not changed, a
                             report reuses the rows it kept (said on stderr); a replay or import
                             makes the last three asked again. TOOLCANON_REPORT_CACHE=0: never.

Example:
  toolcanon report tools --by namespace --format csv
  toolcanon report usage --by model --format json
  toolcanon report html --since 2026-12-01 --out week.html`,
  query: `Usage: toolcanon query "<SQL>" [options]

Runs one SQL statement against the analytics tables and prints its rows. 64-bit integers are
JSON numbers up to 2^53 and strings beyond (exact). Reads deduplicated data: the statement runs
with the setting final = 1 (FINAL on every table read), so a file replayed twice counts once.
SQL the engine refuses exits 1 with its message and the position marked. The database must
exist (run replay or import first); the one used is named on stderr.

Options:
${SINK_FLAGS}

Example:
  toolcanon query "SELECT harness, count() FROM tool_calls GROUP BY harness"`,
  catalogue: `Usage: toolcanon catalogue [--format table|json|csv]

Prints the tool catalogue: one row per tool and family (table: the README's Markdown table).

Example:
  toolcanon catalogue --format json`,
};

const OPTIONS = {
  format: { type: 'string', default: 'table' },
  db: { type: 'string' },
  clickhouse: { type: 'string' },
  cluster: { type: 'string' },
  by: { type: 'string' },
  'threshold-pct': { type: 'string' },
  'headroom-tokens': { type: 'string' },
  models: { type: 'string' },
  'max-event-bytes': { type: 'string' },
  'max-depth': { type: 'string' },
  'no-progress': { type: 'boolean', default: false },
  'no-redact': { type: 'boolean', default: false },
  'retention-days': { type: 'string' },
  'allow-dead-letters': { type: 'boolean', default: false },
  // replay: the files are complete (an unterminated last line is read too).
  complete: { type: 'boolean', default: false },
  verbose: { type: 'boolean', default: false },
  prices: { type: 'string' },
  out: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  harness: { type: 'string' },
  // import: the importing machine (report: a host filter), and publishing to Kafka instead.
  host: { type: 'string' },
  'device-id': { type: 'string' },
  'state-dir': { type: 'string' },
  'to-kafka': { type: 'boolean', default: false },
  brokers: { type: 'string' },
  topic: { type: 'string' },
  'dlq-topic': { type: 'string' },
  partitions: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'V', default: false },
} as const satisfies ParseArgsConfig['options'];


/** The commands, as typed (for "did you mean"). */
const COMMANDS = ['replay', 'import', 'watch', 'statusline', 'validate', 'report', 'query', 'consume', 'produce', 'export', 'serve', 'catalogue', 'help', 'version'] as const;

type OptionName = keyof typeof OPTIONS;
/** Flags every command takes. */
const ANY_COMMAND: readonly OptionName[] = ['format', 'help', 'version', 'verbose'];
const SINK: readonly OptionName[] = ['db', 'clickhouse', 'cluster', 'retention-days'];
const WRITE: readonly OptionName[] = [...SINK, 'threshold-pct', 'headroom-tokens', 'models', 'max-event-bytes', 'max-depth', 'no-progress', 'no-redact', 'allow-dead-letters'];
/**
 * The flags each command of this parser takes besides ANY_COMMAND: one given to a command that
 * would ignore it (`query --since`, `replay --by`) is refused, exit 2, before any work.
 */
const COMMAND_FLAGS: Readonly<Record<string, readonly OptionName[]>> = {
  replay: [...WRITE, 'complete'],
  import: [...WRITE, 'host', 'device-id', 'state-dir', 'to-kafka', 'brokers', 'topic', 'dlq-topic', 'partitions'],
  validate: ['max-event-bytes', 'max-depth', 'no-redact'],
  // Which of these a report takes is its declaration's (report-commands.ts, checked there).
  report: [...SINK, 'by', 'prices', 'out', 'since', 'until', 'harness', 'host'],
  query: SINK,
  catalogue: [],
};

function checkCommandFlags(command: string, values: Readonly<Record<string, unknown>>): void {
  const takes = COMMAND_FLAGS[command];
  if (takes === undefined) return;
  for (const name of Object.keys(OPTIONS) as OptionName[]) {
    const option = OPTIONS[name] as { readonly default?: unknown };
    const value = values[name];
    if (value === undefined || value === option.default || ANY_COMMAND.includes(name) || takes.includes(name)) continue;
    const hint = command === 'query' && ['since', 'until', 'harness', 'host'].includes(name) ? ' (put the condition in the SQL: WHERE …)' : '';
    throw new UsageError(`${command} takes no --${name}${hint}`);
  }
}

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[1-9][0-9]*$/.test(value)) throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

function parseFormat(value: string): OutputFormat {
  if ((OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}, got ${JSON.stringify(value)}${didYouMean(value, OUTPUT_FORMATS)}`);
}

function summaryRows(counts: PipelineCounts, elapsedMs: number): Row[] {
  return [
    { metric: 'events_read', value: counts.eventsRead },
    ...storedRows(counts),
    { metric: 'blank_lines_skipped', value: counts.blankLines },
    { metric: 'bytes_read', value: counts.bytesRead },
    ...rateRows(counts.eventsRead, elapsedMs),
  ];
}

function importSummaryRows(s: ImportSummary, elapsedMs: number): Row[] {
  const rows: Row[] = [
    { metric: 'files_seen', value: s.filesSeen },
    { metric: 'files_read', value: s.filesRead },
    { metric: 'files_unchanged', value: s.filesUnchanged },
    { metric: 'records_read', value: s.recordsRead },
    { metric: 'events_emitted', value: s.eventsEmitted },
    { metric: 'events_already_imported', value: s.eventsAlreadyImported },
    { metric: 'malformed_records', value: s.malformedRecords },
  ];
  for (const [type, n] of Object.entries(s.skippedRecords).sort()) rows.push({ metric: `skipped_records.${type}`, value: n });
  const pipeline = summaryRows(s.counts, elapsedMs).filter((r) => r['metric'] !== 'blank_lines_skipped');
  rows.push(...pipeline, { metric: 'mb_per_s', value: elapsedMs > 0 ? Number(((s.bytesParsed / 1e6) / (elapsedMs / 1000)).toFixed(2)) : 0 });
  return rows;
}

/**
 * One importer's local import into an open sink: its summary rows, the line saying what was
 * already stored (a resumed import), and what makes the run exit 1 (what was read held no event
 * of that harness, no log file was found, or most records were malformed), unless allowed.
 */
async function importInto(
  sink: ClickHouseSink,
  importer: Importer,
  targets: readonly string[],
  machine: Machine,
  o: {
    readonly limits: DecodeLimits;
    readonly accounting: ReturnType<typeof accountingConfig>;
    readonly io: Io;
    readonly progress: boolean;
    readonly allowDeadLetters: boolean;
    /** `import all` passes false: a harness's folder with no log file in it is not a failure there. */
    readonly requireFiles?: boolean;
    /** The data directory where the copy of the import state is kept (see importMirrorDir). */
    readonly mirrorDir?: string | undefined;
  },
): Promise<{ rows: Row[]; resumed: string | undefined; problem: string | undefined; filesSeen: number }> {
  const which = importer.id;
  const verdict = { requireFiles: o.requireFiles !== false };
  const started = performance.now();
  o.io.err(`Importing ${which} logs from ${targets.join(', ')} into ${sink.description}`);
  const alreadyStored = await storedBeforeImport(sink, importer, targets, machine.device_id);
  const progress = createProgressBar(o.progress, 1);
  let summary: ImportSummary;
  try {
    const { runImport } = await import('../pipeline/import.ts');
    summary = await runImport(importer, targets, sink, {
      limits: o.limits,
      accounting: o.accounting,
      machine,
      onProgress: (filesDone, filesTotal, bytesDone, bytesTotal) => progress.update(bytesDone, bytesTotal, `${filesDone}/${filesTotal} files`),
      // A refused run records nothing: the next one reads the same files and refuses them again.
      recordIf: (r) => o.allowDeadLetters || importProblem(importer, targets, r, verdict) === undefined,
    });
  } finally {
    progress.done();
  }
  // The copy of the state just recorded, for the next run that finds nothing new (import-mirror.ts).
  if (o.mirrorDir !== undefined) writeImportMirror(o.mirrorDir, importer.id, machine.device_id, await sink.loadImportState(importer.id, machine.device_id));
  const rows = withAlreadyStored(importSummaryRows(summary, performance.now() - started), alreadyStored, 'events_already_imported');
  const resumed = alreadyStoredLine(alreadyStored, summary.eventsEmitted);
  const problem = o.allowDeadLetters ? undefined : importProblem(importer, targets, summary, verdict);
  return { rows, resumed, problem, filesSeen: summary.filesSeen };
}

/**
 * The answer of importInto when the data directory's copy of the import state shows every file
 * of the importer unchanged (src/pipeline/import-mirror.ts): the same rows (nothing read, every
 * file unchanged), without starting the engine. Undefined: take the usual way.
 */
function importUnchanged(
  dir: string,
  importer: Importer,
  targets: readonly string[],
  machine: Machine,
  o: { readonly io: Io; readonly allowDeadLetters: boolean; readonly requireFiles?: boolean },
): { rows: Row[]; resumed: undefined; problem: string | undefined; filesSeen: number; line: string } | undefined {
  const started = performance.now();
  const files = importer.listFiles(targets);
  if (!unchangedSinceMirror(dir, importer.id, machine.device_id, files)) return undefined;
  const line = `Importing ${importer.id} logs from ${targets.join(', ')} into ${describeTarget({ kind: 'embedded', dir })}`;
  const summary: ImportSummary = {
    filesSeen: files.length,
    filesRead: 0,
    filesUnchanged: files.length,
    recordsRead: 0,
    eventsEmitted: 0,
    eventsAlreadyImported: 0,
    malformedRecords: 0,
    skippedRecords: {},
    bytesParsed: 0,
    counts: emptyCounts(),
  };
  const rows = withAlreadyStored(importSummaryRows(summary, performance.now() - started), 0, 'events_already_imported');
  const problem = o.allowDeadLetters ? undefined : importProblem(importer, targets, summary, { requireFiles: o.requireFiles !== false });
  return { rows, resumed: undefined, problem, filesSeen: files.length, line };
}

/** Every importer's importUnchanged answer, or undefined when any one has something to read. */
function allUnchanged(dir: string, found: readonly { importer: Importer; targets: string[] }[], machine: Machine, o: Parameters<typeof importUnchanged>[4]): NonNullable<ReturnType<typeof importUnchanged>>[] | undefined {
  const out = [];
  for (const f of found) {
    const r = importUnchanged(dir, f.importer, f.targets, machine, o);
    if (r === undefined) return undefined;
    out.push(r);
  }
  return out;
}

/**
 * The embedded data directory this process would open itself (no server named, no process
 * serving it): where an import keeps the copy of its state. Undefined otherwise.
 */
function ownDataDir(values: SinkValues): string | undefined {
  const target = resolveSinkTarget({ db: values.db, clickhouseUrl: values.clickhouse });
  if (target.kind !== 'embedded' || sinkTarget(values).owner !== undefined) return undefined;
  return target.dir;
}

/** Where an import keeps (and may answer from) the copy of its state: ownDataDir, unless --retention-days changes the tables' TTL (that always starts the engine). */
function importMirrorDir(values: SinkValues): string | undefined {
  return values['retention-days'] === undefined ? ownDataDir(values) : undefined;
}

type SinkValues = { db?: string | undefined; clickhouse?: string | undefined; cluster?: string | undefined; 'retention-days'?: string | undefined };

/**
 * A command that only reads (report, query): the embedded database must exist already (a
 * directory holding the engine's tables); it is never created. A server's database is the
 * server's business. The database used is named on stderr (stdout stays the command's output).
 */
async function withExistingSink<T>(values: SinkValues, io: Io, run: (sink: ClickHouseSink) => Promise<T>): Promise<T> {
  const line = existingDatabase(values);
  return withSink(
    values,
    async (sink) => {
      io.err(line);
      return run(sink);
    },
    false,
  );
}

/** The key its rows are kept by: the query (its scope as plain strings) and the code. */
function cacheKey(what: { readonly report: string } & ReportQuery, code: string): ReportCacheKey {
  const scope: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(what.scope)) scope[k] = v === undefined ? undefined : String(v);
  return { report: what.report, by: what.by, format: what.format, scope, prices: what.pricesText, code };
}

/**
 * A report's rows (src/report/cache.ts): from the rows kept for the same report when the data
 * directory this process would open itself (not one another process serves) has the same tables
 * as then, else computed by `compute` and kept. TOOLCANON_REPORT_CACHE=0: always computed.
 */
async function reusedRows<T>(values: SinkValues, io: Io, what: { readonly report: string } & ReportQuery, compute: () => Promise<T>): Promise<T> {
  const dir = reportCacheEnabled() ? ownDataDir(values) : undefined;
  // A directory served by another process is read through it (ownDataDir: undefined). One that
  // another process merely holds is answered from kept rows as well: its stamp changes with every
  // part that process writes, so rows kept are reused only while its tables are as they were.
  if (dir === undefined || holdsDatabase(dir) !== true) return compute();
  const code = codeIdentity();
  if (code === undefined) return compute();
  const key = cacheKey(what, code);
  const kept = readReportCache(dir, key);
  if (kept !== undefined) {
    io.err(`${existingDatabase(values)} (its tables unchanged since the rows of this report were made: rows reused)`);
    return kept as T;
  }
  const rows = await compute();
  writeReportCache(dir, [{ key, rows }]);
  return rows;
}

/**
 * The code a kept report was computed by: set by bin/toolcanon.mjs (dist/'s build stamp, or the
 * newest source file's time when it runs the sources); undefined (nothing kept or reused) when
 * the command line runs without it.
 */
function codeIdentity(): string | undefined {
  return process.env['TOOLCANON_CODE'] || undefined;
}

/** withSink for a command that writes events (replay, import): the reports kept in the directory are made again after it. */
function withWritingSink<T>(values: SinkValues, run: (sink: ClickHouseSink) => Promise<T>): Promise<T> {
  return withSink(values, run, true, true);
}

/** `createDatabase` false: a server database that does not exist is an error, not created (a command that only reads). */
async function withSink<T>(values: SinkValues, run: (sink: ClickHouseSink) => Promise<T>, createDatabase = true, remakeReports = false): Promise<T> {
  // A directory another process owns (serve, watch) is read and written through it.
  const target = sinkTarget(values);
  if (target.owner !== undefined && createDatabase) process.stderr.write(`toolcanon: the data directory is served by process ${target.owner.pid} (${target.owner.command}): writing through it\n`);
  // Loaded here: the ClickHouse client and the sink are ~80 ms of a start a command without a database never pays.
  const { ClickHouseSink } = await import('../sink/clickhouse.ts');
  const sink = await ClickHouseSink.open({ db: target.db, clickhouseUrl: target.clickhouseUrl, retentionDays: retentionDays(values['retention-days']), cluster: clusterName(values.cluster, values.clickhouse) }, { createDatabase });
  for (const notice of sink.notices) process.stderr.write(`toolcanon: ${notice}\n`);
  // A write into a directory of this process's own: the reports kept there (src/report/cache.ts)
  // are made again while the engine is open, and kept with the stamp of the tables it leaves.
  const keptIn = remakeReports && reportCacheEnabled() ? ownDataDir(values) : undefined;
  let remade: { key: ReportCacheKey; rows: unknown }[] = [];
  try {
    const result = await run(sink);
    if (keptIn !== undefined) remade = await remakeKeptReports(sink, keptIn);
    return result;
  } finally {
    await sink.close();
    writeReportCache(keptIn as string, remade);
  }
}

/** Kept reports made again after a write: the most recently asked, at most this many (each ~30-70 ms). */
const REMADE_AFTER_WRITE = 3;

/**
 * The reports kept in a directory (the most recently asked, REMADE_AFTER_WRITE at most, of this
 * code) made again on the sink. One that fails is left out: its rows no longer match the
 * tables' stamp, so the next report makes them.
 */
async function remakeKeptReports(sink: ClickHouseSink, dir: string): Promise<{ key: ReportCacheKey; rows: unknown }[]> {
  const code = codeIdentity();
  if (code === undefined) return [];
  const out: { key: ReportCacheKey; rows: unknown }[] = [];
  for (const key of keptKeys(dir, code, REMADE_AFTER_WRITE)) {
    const d = REPORTS.find((r) => r.name === key.report);
    if (d?.rows === undefined) continue;
    const q: ReportQuery = { by: key.by ?? undefined, format: key.format as OutputFormat, scope: key.scope as ReportQuery['scope'], pricesText: key.prices ?? undefined };
    try {
      out.push({ key, rows: await d.rows(sink, q) });
    } catch {
      // not made again: the next report makes it
    }
  }
  return out;
}

/** The catalogue rows as flat records (json / csv output). */
function catalogueRecords(rows: typeof import('../catalogue/index.ts').CATALOGUE_ROWS): Row[] {
  return rows.map((r) => ({
    namespace: r.ns,
    tool: r.name,
    kind: r.kind,
    label: r.label,
    read_only: r.readOnly,
    canonical_input: r.input === null ? null : Object.fromEntries(Object.entries(r.input)),
    large: r.large,
    specific: r.specific,
    discovery: r.discovery ?? null,
  }));
}

/**
 * One line when a replay recognised nothing, or mostly dead letters (more than half): what was
 * found. Undefined for a run that looks like events.
 */
export function describeJunk(eventsRead: number, rowsWritten: number, byReason: Partial<Record<string, number>>): string | undefined {
  if (eventsRead === 0) return undefined;
  const dead = eventsRead - rowsWritten;
  if (rowsWritten > 0 && dead * 2 <= eventsRead) return undefined;
  const reasons = Object.entries(byReason).sort((a, b) => (b[1] ?? 0) - (a[1] ?? 0)).map(([r, n]) => `${n} ${r}`).join(', ');
  return rowsWritten === 0 ? `none of the ${eventsRead} event(s) was recognised (${reasons})` : `${dead} of ${eventsRead} event(s) were dead letters (${reasons})`;
}

export async function main(argv: readonly string[], io: Io): Promise<number> {
  // The Kafka commands have options of their own (and the only imports of the Kafka client).
  if (argv[0] === 'consume' || argv[0] === 'produce') {
    const kafka = await import('./kafka-commands.ts');
    return argv[0] === 'consume' ? kafka.runConsumeCommand(argv.slice(1), io) : kafka.runProduceCommand(argv.slice(1), io);
  }
  // So does export (and only it loads the OpenTelemetry SDK).
  if (argv[0] === 'export') return (await import('./export-command.ts')).runExportCommand(argv.slice(1), io);
  // watch and statusline have options of their own (statusline loads no engine: bin/toolcanon.mjs runs it without this module).
  if (argv[0] === 'watch') return (await import('./watch-command.ts')).runWatchCommand(argv.slice(1), io);
  if (argv[0] === 'statusline') return (await import('./statusline-command.ts')).runStatuslineCommand(argv.slice(1), io);
  // serve owns a data directory until stopped (src/serve/owner.ts).
  if (argv[0] === 'serve') return (await import('./serve-command.ts')).runServeCommand(argv.slice(1), io);
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw parseArgsUsageError(error, OPTIONS);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.version || command === 'version') {
    // The same path from src/cli and dist/cli; read only here, so no other command pays for it.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    io.out(`toolcanon ${pkg.version}`);
    return 0;
  }
  if (values.help && command !== undefined && COMMAND_HELP[command] !== undefined) {
    io.out(COMMAND_HELP[command]);
    return 0;
  }
  if (values.help || command === undefined || command === 'help') {
    io.out(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  // Every flag is checked before any work starts: a command given a flag it does not take says so.
  if (command !== undefined) checkCommandFlags(command, values);
  const format = parseFormat(values.format);
  const limits: DecodeLimits = {
    maxEventBytes: positiveInt('max-event-bytes', values['max-event-bytes'], DEFAULT_LIMITS.maxEventBytes),
    maxDepth: positiveInt('max-depth', values['max-depth'], DEFAULT_LIMITS.maxDepth),
    redact: !values['no-redact'] && redactionFromEnv(),
  };
  const accounting = accountingConfig(values);
  retentionDays(values['retention-days']);
  clusterName(values.cluster, values.clickhouse);
  if (values.clickhouse !== undefined) checkClickHouseUrl(values.clickhouse, '--clickhouse');
  else if (process.env['TOOLCANON_CLICKHOUSE_URL']) checkClickHouseUrl(process.env['TOOLCANON_CLICKHOUSE_URL'], '$TOOLCANON_CLICKHOUSE_URL');

  switch (command) {
    case 'replay': {
      if (rest.length === 0) throw new UsageError('replay needs at least one path (a file, a directory, or - for stdin)');
      // A last line without its newline is still being written: left for a later run (and
      // counted), unless --complete says the files are finished. Stdin's end is its end.
      const listed = listInputFiles(rest);
      const { files, torn } = values.complete ? { files: listed, torn: [] } : leaveTornLastLines(listed);
      const started = performance.now();
      let alreadyStored = 0;
      // Ctrl-C: stops at the next write, says what is stored (src/cli/interrupt.ts), exit 130.
      const counts = await interruptible(io.err, (stop) => withWritingSink(values, (store) => stop.during(store, async (sink) => {
        io.err(`Replaying ${files.length} input(s) into ${sink.description}`);
        alreadyStored = await storedBeforeReplay(sink, files.map((f) => f.path));
        const progress = createProgressBar(io.isTty && !values['no-progress'], files.reduce((n, f) => n + f.bytes, 0));
        try {
          const { replayFiles } = await import('../pipeline/batch-writer.ts');
          return await replayFiles(files, sink, { limits, accounting, onProgress: progress.update });
        } finally {
          progress.done();
        }
      }, async (sink) => interruptedLine(await storedBeforeReplay(sink, files.map((f) => f.path)), alreadyStored, stdinOf(files)))));
      const replayRows = withAlreadyStored(summaryRows(counts, performance.now() - started), alreadyStored, 'events_read');
      if (torn.length > 0) replayRows.splice(replayRows.findIndex((r) => r['metric'] === 'blank_lines_skipped') + 1, 0, { metric: 'torn_last_lines_unread', value: torn.length });
      io.out(renderRows(replayRows, format));
      const tornLine = tornLinesLine(torn, '--complete');
      if (tornLine !== undefined) io.err(tornLine);
      const resumed = alreadyStoredLine(alreadyStored, counts.eventsRead);
      if (resumed !== undefined) io.err(resumed);
      const junk = describeJunk(counts.eventsRead, counts.rowsWritten, counts.deadLettersByReason);
      if (junk !== undefined && !values['allow-dead-letters']) {
        io.err(`toolcanon: ${junk}: expected JSONL lines of toolcanon.event/v1 envelopes (see 'toolcanon report dead-letters'; nothing accepted was lost; --allow-dead-letters accepts this)`);
        return 1;
      }
      return 0;
    }
    case 'import': {
      const [which, ...paths] = rest;
      const local = { limits, accounting, io, progress: io.isTty && !values['no-progress'], allowDeadLetters: values['allow-dead-letters'] === true };
      if (which === 'all') {
        if (paths.length) throw new UsageError(`import all takes no path (it reads each harness's default location), got ${JSON.stringify(paths[0])}`);
        if (values['to-kafka']) throw new UsageError('import all writes to a database; with --to-kafka, run import <harness> for each harness');
        const found: { importer: Importer; targets: string[] }[] = [];
        const looked: string[] = [];
        for (const id of IMPORTER_IDS) {
          const importer = await loadImporter(id);
          const defaults = importer.defaultPaths();
          if (defaults.length) looked.push(`${id}: ${defaults.join(', ')}`);
          const targets = defaults.filter((p) => existsSync(p));
          if (targets.length) found.push({ importer, targets });
        }
        if (found.length === 0) {
          io.err(`toolcanon: import all found no harness logs in their default locations (${looked.join('; ')})${local.allowDeadLetters ? '' : ' (--allow-dead-letters accepts this)'}`);
          return local.allowDeadLetters ? 0 : 1;
        }
        const { importMachineFrom } = await import('./import-kafka.ts');
        const machine = importMachineFrom(values);
        const mirrorDir = importMirrorDir(values);
        // Nothing new in any harness's files: answered without the engine.
        const unchanged = mirrorDir === undefined ? undefined : allUnchanged(mirrorDir, found, machine, { ...local, requireFiles: false });
        for (const r of unchanged ?? []) io.err(r.line);
        // One process and one engine for every harness found: start-up is paid once.
        const results = unchanged !== undefined ? unchanged.map((r, i) => ({ id: found[i]!.importer.id, ...r })) : await interruptible(io.err, (stop) => withWritingSink(values, (store) => stop.during(store, async (sink) => {
          const out = [];
          for (const f of found) out.push({ id: f.importer.id, ...(await importInto(sink, f.importer, f.targets, machine, { ...local, requireFiles: false, mirrorDir })) });
          return out;
        }, async (sink) => interruptedLine(await sink.countStoredFromFiles(found.flatMap((f) => f.importer.listFiles(f.targets))), undefined))));
        io.out(renderRows(results.flatMap((r) => r.rows.map((row) => ({ importer: r.id, ...row }))), format, ['importer', 'metric', 'value']));
        for (const r of results) if (r.resumed !== undefined) io.err(`${r.id}: ${r.resumed}`);
        const problems = results.flatMap((r) => (r.problem === undefined ? [] : [r.problem]));
        // A folder without logs is not a failure of `all` unless no harness had any.
        if (!local.allowDeadLetters && results.every((r) => r.filesSeen === 0)) {
          problems.push(`import all found no log files in the folders it found (${found.map((f) => `${f.importer.id}: ${f.targets.join(', ')}`).join('; ')}) (--allow-dead-letters accepts this)`);
        }
        for (const problem of problems) io.err(`toolcanon: ${problem}`);
        return problems.length ? 1 : 0;
      }
      if (which === undefined || !isImporterId(which)) throw new UsageError(`import needs one of ${IMPORTER_IDS.join(', ')}, or all${which === undefined ? '' : `, got ${JSON.stringify(which)}${didYouMean(which, [...IMPORTER_IDS, 'all'])}`}`);
      const importer = await loadImporter(which);
      const targets = paths.length ? paths : importer.defaultPaths();
      if (targets.length === 0) throw new UsageError(`import ${which} needs at least one file or folder (it has no default location)`);
      const { importMachineFrom, runImportToKafka } = await import('./import-kafka.ts');
      const machine = importMachineFrom(values);
      if (values['to-kafka']) return runImportToKafka(importer, targets, values, machine, io, format, limits.redact !== false, values['allow-dead-letters']);
      const mirrorDir = importMirrorDir(values);
      const unchanged = mirrorDir === undefined ? undefined : importUnchanged(mirrorDir, importer, targets, machine, local);
      if (unchanged !== undefined) io.err(unchanged.line);
      const result =
        unchanged ??
        (await interruptible(io.err, (stop) =>
          withWritingSink(values, (store) => stop.during(store, (sink) => importInto(sink, importer, targets, machine, { ...local, mirrorDir }), async (sink) => interruptedLine(await sink.countStoredFromFiles(importer.listFiles(targets)), undefined))),
        ));
      io.out(renderRows(result.rows, format));
      if (result.resumed !== undefined) io.err(result.resumed);
      if (result.problem !== undefined) {
        io.err(`toolcanon: ${result.problem}`);
        return 1;
      }
      return 0;
    }
    case 'validate': {
      if (rest.length === 0) throw new UsageError('validate needs at least one path');
      const { decodeEvent } = await import('../decode/event.ts');
      const counts = emptyCounts();
      const bad: Row[] = [];
      const warnings: Row[] = [];
      for (const file of listInputFiles(rest)) {
        for await (const line of readLines(openInput(file), file.path, undefined, () => counts.blankLines++, file.path === '-' ? undefined : { path: file.path })) {
          counts.eventsRead++;
          const outcome = decodeEvent(line.bytes, line.source, '1970-01-01 00:00:00.000', limits);
          if (outcome.kind === 'dead') bad.push({ source: line.source, reason: outcome.dead.reason, detail: outcome.dead.detail });
          else if (outcome.kind === 'row' && outcome.row.flags.length) warnings.push({ source: line.source, reason: `warning: ${outcome.row.flags.join(',')}`, detail: `${outcome.row.harness}/${outcome.row.tool_name}` });
          else if (outcome.kind === 'mcp') {
            for (const r of outcome.registrations) if (r.flags.length) warnings.push({ source: line.source, reason: `warning: ${r.flags.join(',')}`, detail: `mcp_tools ${r.server}: ${r.qualified_name}` });
          }
        }
      }
      const lines = [...bad, ...warnings];
      if (format === 'table') {
        for (const r of lines) io.out(`${String(r['source'])}: ${String(r['reason'])}: ${String(r['detail'])}`);
        io.err(`${counts.eventsRead} event(s): ${counts.eventsRead - bad.length} valid, ${bad.length} invalid, ${warnings.length} flagged`);
      } else if (lines.length) {
        io.out(renderRows(lines, format, ['source', 'reason', 'detail']));
      }
      return bad.length ? 1 : 0;
    }
    case 'report': {
      const [what, ...extra] = rest;
      const report = findReport(what);
      if (extra.length) throw new UsageError(`report ${report.name} takes no argument, got ${JSON.stringify(extra[0])}`);
      checkGrouping(report, values.by);
      const scope = reportScope(report, values);
      let pricesText: string | undefined;
      if (values.prices !== undefined) {
        // Checked before any work: a file that cannot be read or is no price table is one line naming it.
        const { PriceTable, readPricesFile } = await import('../cost/prices.ts');
        pricesText = readPricesFile(values.prices);
        PriceTable.withOverridesText(pricesText, values.prices);
      }
      const q: ReportQuery = { by: values.by, format, scope, pricesText };
      const { rows, print } = report;
      if (rows !== undefined && print !== undefined) {
        print(await reusedRows(values, io, { report: report.name, ...q }, () => withExistingSink(values, io, (sink) => rows(sink, q))), q, io);
      } else await report.run?.({ ...q, flags: values, io, withSink: (run) => withExistingSink(values, io, run) });
      return 0;
    }
    case 'query': {
      const [sql, ...extra] = rest;
      if (sql === undefined || extra.length) throw new UsageError('query takes exactly one SQL argument (quote it)');
      if (sql.trim() === '') throw new UsageError('query was given an empty SQL statement: give one, e.g. toolcanon query "SELECT count() FROM tool_calls"');
      // SQL toolcanon did not write may change import_files: the copies of the import state go first.
      const queried = ownDataDir(values);
      if (queried !== undefined && holdsDatabase(queried) === true) {
        dropImportMirrors(queried);
        dropReportCache(queried);
      }
      const rows = await withExistingSink(values, io, async (sink) => {
        try {
          // final = 1: FINAL on every table read, so plain SQL counts each event once.
          return await sink.queryDisplayRows(sql, { final: 1 });
        } catch (error) {
          if (error instanceof SinkError) throw error;
          throw describeQueryError(error, sql) ?? error;
        }
      });
      io.out(renderRows(rows, format));
      return 0;
    }
    case 'catalogue': {
      // ~80 KB of rows only this command reads: loaded here.
      const { CATALOGUE_ROWS, renderCatalogueMarkdown } = await import('../catalogue/index.ts');
      if (format === 'table') io.out(renderCatalogueMarkdown());
      else io.out(renderRows(catalogueRecords(CATALOGUE_ROWS), format));
      return 0;
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}${didYouMean(command, COMMANDS)}`);
  }
}

/** Runs the CLI against the process: errors become one clear line on stderr and an exit code. */
export async function run(argv: readonly string[]): Promise<void> {
  const io: Io = {
    out: (t) => process.stdout.write(`${t}\n`),
    // Never a password: registered secrets and URL user:password@ are scrubbed from stderr.
    err: (t) => process.stderr.write(`${scrubSecrets(t)}\n`),
    isTty: process.stderr.isTTY === true,
  };
  try {
    process.exitCode = await main(argv, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ScopeError) {
      io.err(`toolcanon: ${error.message}\nRun 'toolcanon --help' for usage.`);
      process.exitCode = 2;
    } else if (error instanceof InputError || error instanceof NoDatabaseError || error instanceof QueryError || error instanceof OutFileError) {
      io.err(`toolcanon: ${error.message}`);
      process.exitCode = 1;
    } else if (error instanceof ConfigError) {
      io.err(`toolcanon: ${error.message}`);
      process.exitCode = 2;
    } else if (error instanceof Interrupted) {
      io.err(`toolcanon: ${error.message}`);
      process.exitCode = INTERRUPTED_EXIT_CODE;
      // The stopped run ends at its next store call; input it still waits for (stdin) must not hold the process.
      setTimeout(() => process.exit(), 1_000).unref();
    } else {
      io.err(`toolcanon: ${describeFailure(error)}`);
      if (argv.includes('--verbose') || process.env['DEBUG']) io.err(String((error as Error).stack ?? error));
      process.exitCode = 1;
    }
  }
  if (argv[0] === 'consume') {
    // The worker has stopped and said so; should a Kafka client still be connecting (a stop
    // during a slow start), it must not hold the process past the bounded shutdown.
    setTimeout(() => process.exit(), LINGER_AFTER_CONSUME_MS).unref();
  }
}

/**
 * A failure as one line that says what to do: the engine's and the client's messages carry
 * stack dumps, internal query suffixes and codes a user cannot act on (stack with --verbose).
 */
export function describeFailure(error: unknown): string {
  if (error instanceof SinkError) return error.message;
  const kafka = describeKafkaFailure(error);
  if (kafka !== undefined) return kafka;
  const e = error as Error & { code?: unknown };
  const message = String(e.message ?? error);
  const lock = /Cannot lock file (\S+)/.exec(message);
  if (lock) {
    return `the data directory of ${lock[1]?.replace(/\/?status$/, '').replace(/\.$/, '')} is in use by another toolcanon (or chdb) process: wait for it to finish, or use another --db`;
  }
  if (e.code === 'ECONNREFUSED' || /ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(message)) {
    const where = /(?:connect ECONNREFUSED|getaddrinfo \w+) (\S+)/.exec(message)?.[1];
    return `cannot reach the ClickHouse server${where ? ` at ${where}` : ''}: is it running, and is --clickhouse right?`;
  }
  const first = (message.split('\n').find((l) => l.trim() !== '') ?? message)
    .replace(/\s*FORMAT JSONEachRow\s*$/i, '')
    .replace(/^(Code: \d+\. DB::Exception: )+/, '')
    .replace(/ \(version [0-9.]+\)/g, '')
    .replace(/\s*FORMAT JSONEachRow\b/gi, '');
  return first.trim();
}

/** How long a `consume` process may linger after its worker stopped before it exits regardless. */
const LINGER_AFTER_CONSUME_MS = 5_000;
