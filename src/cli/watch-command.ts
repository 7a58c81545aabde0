// `toolcanon watch <harness…|all> [paths…]`: follows the harnesses' logs (src/watch/follow.ts)
// into a database or, with --to-kafka, a topic. Runs until SIGTERM or SIGINT: then the cycle in
// flight ends, a last cycle reads what was appended meanwhile, everything is stored and recorded,
// one summary line is printed and the exit code is 0. A restart resumes from what was recorded.
import { existsSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DEFAULT_LIMITS, type DecodeLimits } from '../decode/event.ts';
import { IMPORTER_IDS, type Importer } from '../importers/types.ts';
import { isImporterId, loadImporter } from '../importers/registry.ts';
import { redactionFromEnv } from '../redact/redact.ts';
import { ClickHouseSink, resolveSinkTarget } from '../sink/clickhouse.ts';
import { findOwner, startOwner, type Owner } from '../serve/owner.ts';
import { Follower, type CycleReport, type FollowedHarness, type FollowSink } from '../watch/follow.ts';
import { accountingConfig } from './accounting-flags.ts';
import { OUTPUT_FORMATS, renderRows, type OutputFormat } from './format.ts';
import { importMachineFrom, stateDirFrom } from './import-kafka.ts';
import { UsageError, type Io } from './io.ts';
import { checkClickHouseUrl, retentionDays } from './sink-flags.ts';
import { didYouMean, parseArgsUsageError } from './suggest.ts';
import { describeFailure } from './main.ts';

export const WATCH_HELP = `Usage: toolcanon watch <${IMPORTER_IDS.join('|')}…|all> [paths…] [options]

Follows the logs a harness writes (default: its usual folder, as import) and imports what is
appended as it is written: file-system notifications on each folder, a rescan every
--rescan-ms as a fallback; new files and new session folders are picked up by themselves. The
same incremental import state as import (a database's import_files per device; --to-kafka: the
state directory), so watch and import take turns without reading anything twice. A last line
without its newline waits for it; a file truncated, replaced (rotated), rewritten or deleted is
said in one line. SIGTERM or Ctrl-C: stores and records what was read, prints one summary line,
exits 0; a restart resumes from there. Paths go with one harness only.

Options:
  --db DIR                   Embedded ClickHouse data directory (default .toolcanon/db, or $TOOLCANON_DB)
  --clickhouse URL           A ClickHouse server instead (or $TOOLCANON_CLICKHOUSE_URL)
  --unguarded-engine         As toolcanon serve's: where the engine of an owned --db cannot get a
                             network namespace of its own, run it on 127.0.0.1 anyway (any local
                             process could then read and write the tables without the token)
  --to-kafka                 Publish to Kafka instead (as import --to-kafka): --brokers H:P[,…]
                             --topic T [--dlq-topic T] [--partitions N] [--state-dir DIR]
  --host NAME, --device-id ID  This machine, as import takes them
  --rescan-ms N              Fallback rescan interval (default 10000)
  --tail-settle-ms N         Events at a file's end that its next lines may still change (a call
                             waiting for its result, a response still streamed) are held until
                             those lines come, or the file is still this long (default 30000)
  --threshold-pct N          Context threshold for breaches, percent (default 85)
  --headroom-tokens N        Moves the trigger earlier by N tokens (default 0)
  --models FILE              JSON { "model": contextWindowTokens } laid over the shipped table
  --retention-days N         Keep N days of event time in every table (0 removes it)
  --no-redact                Store secrets verbatim (default: redacted; or TOOLCANON_REDACT=0)
  --quiet                    No line per cycle (the notices and the summary stay)
  --format table|json|csv    The summary at the end (default table: one line)

Example:
  toolcanon watch claude-code             # ~/.claude/projects, until Ctrl-C
  toolcanon watch all --clickhouse http://warehouse:8123/agents
  toolcanon watch codex --to-kafka --brokers kafka:9092 --topic tool-events`;

const OPTIONS = {
  format: { type: 'string', default: 'table' },
  db: { type: 'string' },
  clickhouse: { type: 'string' },
  'threshold-pct': { type: 'string' },
  'headroom-tokens': { type: 'string' },
  models: { type: 'string' },
  'max-event-bytes': { type: 'string' },
  'max-depth': { type: 'string' },
  'retention-days': { type: 'string' },
  'no-redact': { type: 'boolean', default: false },
  host: { type: 'string' },
  'device-id': { type: 'string' },
  'state-dir': { type: 'string' },
  'to-kafka': { type: 'boolean', default: false },
  'unguarded-engine': { type: 'boolean', default: false },
  brokers: { type: 'string' },
  topic: { type: 'string' },
  'dlq-topic': { type: 'string' },
  partitions: { type: 'string' },
  'rescan-ms': { type: 'string' },
  'tail-settle-ms': { type: 'string' },
  quiet: { type: 'boolean', default: false },
  verbose: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[1-9][0-9]*$/.test(value)) throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** The harnesses and their folders from `<harness…|all> [paths…]`. */
async function harnessesOf(positionals: readonly string[]): Promise<FollowedHarness[]> {
  if (positionals.length === 0) throw new UsageError(`watch needs one or more of ${IMPORTER_IDS.join(', ')}, or all`);
  const ids: string[] = [];
  let i = 0;
  while (i < positionals.length && (isImporterId(positionals[i] as string) || positionals[i] === 'all')) ids.push(positionals[i++] as string);
  const paths = positionals.slice(i);
  if (ids.length === 0) {
    const first = positionals[0] as string;
    throw new UsageError(`watch needs one of ${IMPORTER_IDS.join(', ')}, or all, first; got ${JSON.stringify(first)}${didYouMean(first, [...IMPORTER_IDS, 'all'])}`);
  }
  if (ids.includes('all')) {
    if (ids.length > 1) throw new UsageError('watch all follows every harness: name no other');
    if (paths.length) throw new UsageError(`watch all takes no path (it follows each harness's default folder), got ${JSON.stringify(paths[0])}`);
    const found: FollowedHarness[] = [];
    const looked: string[] = [];
    for (const id of IMPORTER_IDS) {
      const importer = await loadImporter(id);
      const defaults = importer.defaultPaths();
      if (defaults.length) looked.push(`${id}: ${defaults.join(', ')}`);
      const roots = defaults.filter((p) => existsSync(p));
      if (roots.length) found.push({ importer, roots });
    }
    if (found.length === 0) throw new WatchError(`watch all found no harness folder in the default locations (${looked.join('; ')})`);
    return found;
  }
  if (paths.length && ids.length > 1) throw new UsageError(`watch takes paths with one harness only (got ${ids.join(', ')} and ${JSON.stringify(paths[0])}); run one watch per harness, or give no path`);
  const out: FollowedHarness[] = [];
  for (const id of new Set(ids)) {
    const importer: Importer = await loadImporter(id as (typeof IMPORTER_IDS)[number]);
    const roots = paths.length ? paths : importer.defaultPaths();
    if (roots.length === 0) throw new UsageError(`watch ${id} needs a file or folder (it has no default location)`);
    const missing = roots.filter((r) => !existsSync(r));
    if (missing.length === roots.length) throw new WatchError(`${missing.join(', ')}: no such file or directory (watch ${id} follows an existing folder)`);
    out.push({ importer, roots: roots.filter((r) => existsSync(r)) });
  }
  return out;
}

/** A failure watch says in one line (exit 1). */
export class WatchError extends Error {
  override readonly name = 'WatchError';
}

function clock(): string {
  return new Date().toISOString().slice(11, 19);
}

function cycleLine(r: CycleReport): string {
  const g = r.reading;
  const torn = r.tornFiles ? `, ${r.tornFiles} unterminated last line(s) waiting for their newline` : '';
  const old = g.eventsAlreadyImported ? ` (${g.eventsAlreadyImported} read before)` : '';
  const held = r.heldEvents ? `, ${r.heldEvents} event(s) at files' ends held until the lines that complete them come (or ${r.tailSettleMs} ms of stillness)` : '';
  const released = r.released ? `, ${r.released} still file(s) read to their end` : '';
  return `${clock()} ${r.importer}: ${g.filesRead} file(s) read, ${g.recordsRead} record(s), ${g.eventsEmitted} new event(s)${old}, ${g.malformedRecords} malformed${torn}${held}${released}`;
}

export async function runWatchCommand(argv: readonly string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw parseArgsUsageError(error, OPTIONS);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(WATCH_HELP);
    return 0;
  }
  const format = values.format as OutputFormat;
  if (!(OUTPUT_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}, got ${JSON.stringify(values.format)}`);
  const accounting = accountingConfig(values);
  const limits: DecodeLimits = {
    maxEventBytes: positiveInt('max-event-bytes', values['max-event-bytes'], DEFAULT_LIMITS.maxEventBytes),
    maxDepth: positiveInt('max-depth', values['max-depth'], DEFAULT_LIMITS.maxDepth),
    redact: !values['no-redact'] && redactionFromEnv(),
  };
  const rescanMs = positiveInt('rescan-ms', values['rescan-ms'], 10_000);
  const tailSettleMs = positiveInt('tail-settle-ms', values['tail-settle-ms'], 30_000);
  retentionDays(values['retention-days']);
  if (values.clickhouse !== undefined) checkClickHouseUrl(values.clickhouse, '--clickhouse');
  const kafkaOnly = (['brokers', 'topic', 'dlq-topic', 'partitions', 'state-dir'] as const).find((f) => values[f] !== undefined);
  if (!values['to-kafka'] && kafkaOnly !== undefined && kafkaOnly !== 'state-dir') throw new UsageError(`--${kafkaOnly} goes with --to-kafka`);
  const harnesses = await harnessesOf(positionals);
  const machine = importMachineFrom(values);
  const where = harnesses.map((h) => `${h.importer.id} (${h.roots.join(', ')})`).join('; ');

  const run = async (follow: FollowSink, into: string, stored: () => Record<string, number>, fatal?: (stop: (line: string) => void) => void): Promise<number> => {
    const follower = new Follower(harnesses, follow, {
      rescanMs,
      tailSettleMs,
      say: (line) => io.err(`toolcanon watch: ${line}`),
      onCycle: (r) => {
        if (!values.quiet) io.err(cycleLine(r));
      },
      onError: (error) => io.err(`toolcanon watch: a cycle failed (${describeFailure(error)}); what it read is read again at the next change or rescan`),
      reading: { limits, accounting, machine },
    });
    io.err(`Watching ${where} into ${into} as host ${JSON.stringify(machine.host)} (SIGTERM or Ctrl-C stops; a restart resumes)`);
    let signal: string | undefined;
    let wake: () => void = () => {};
    const stopped = new Promise<void>((resolve) => (wake = resolve));
    const onSignal = (name: string) => (): void => {
      if (signal !== undefined) {
        io.err(`toolcanon watch: ${name} again: exiting now without waiting (a restart reads again what was not recorded)`);
        process.exit(130);
      }
      signal = name;
      wake();
    };
    // The engine of an owned directory stopped under us (killed): nothing more can be stored.
    let failure: string | undefined;
    fatal?.((line) => {
      failure = line;
      wake();
    });
    const onTerm = onSignal('SIGTERM');
    const onInt = onSignal('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
    try {
      await follower.start();
      io.err(`${clock()} caught up: following (${follower.totals.eventsEmitted} new event(s) read at start)`);
      await stopped;
      if (failure !== undefined) throw new WatchError(`${failure}; a restart resumes from the last cycle recorded`);
      await follower.stop();
    } finally {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
    }
    const t = follower.totals;
    const summary: Record<string, number> = {
      cycles: t.cycles,
      files_read: t.filesRead,
      records_read: t.recordsRead,
      events_emitted: t.eventsEmitted,
      malformed_records: t.malformedRecords,
      ...stored(),
      files_read_again: t.filesReset,
      files_deleted: t.filesDeleted,
      failed_cycles: t.failedCycles,
      events_held: t.eventsHeld,
    };
    if (format === 'table') {
      io.out(`watch stopped (${signal ?? 'end'}): ${Object.entries(summary).map(([k, v]) => `${k} ${v}`).join(', ')}; everything read is stored and recorded, a restart resumes from here`);
    } else if (format === 'json') io.out(JSON.stringify(summary));
    else io.out(renderRows(Object.entries(summary).map(([metric, value]) => ({ metric, value })), format));
    return t.failedCycles > 0 && t.eventsEmitted === 0 ? 1 : 0;
  };

  if (values['to-kafka']) {
    if (values.db !== undefined || values.clickhouse !== undefined) throw new UsageError('watch --to-kafka writes no database: --db and --clickhouse do not apply (a consume worker writes the warehouse)');
    return runToKafka(values, machine, limits.redact !== false, io, run);
  }
  const { databaseFollowSink } = await import('../watch/sinks.ts');
  // An embedded directory is owned for the run (src/serve/owner.ts): other commands read it
  // through this process meanwhile. One another process already owns is written through it.
  const target = resolveSinkTarget({ db: values.db, clickhouseUrl: values.clickhouse });
  let owner: Owner | undefined;
  let engineExit: ((line: string) => void) | undefined;
  let into: string | undefined;
  let url = values.clickhouse;
  if (target.kind === 'embedded') {
    const other = findOwner(target.dir);
    if (other !== undefined) {
      const u = new URL(other.url);
      u.username = 'default';
      u.password = other.token;
      url = u.toString();
      into = `embedded ClickHouse at ${target.dir}, through process ${other.pid} (${other.command}) at ${other.url}`;
    } else {
      owner = await startOwner(target.dir, { command: 'toolcanon watch', unguardedEngine: values['unguarded-engine'], onEngineExit: (line) => engineExit?.(line) });
      if (!owner.isolated) io.err('toolcanon: WARNING: --unguarded-engine: the engine listens on 127.0.0.1 without a network namespace of its own; any local process that finds its port can read and write the tables without the token');
      url = owner.clickhouseUrl;
      into = `embedded ClickHouse at ${target.dir} (served meanwhile at ${owner.url}, token in ${owner.tokenFile})`;
    }
  }
  try {
    const sink = await ClickHouseSink.open({ db: url === undefined ? values.db : undefined, clickhouseUrl: url, retentionDays: retentionDays(values['retention-days']) });
    for (const notice of sink.notices) io.err(`toolcanon: ${notice}`);
    try {
      const { follow, counts } = databaseFollowSink(sink, { machine, limits, accounting });
      return await run(
        follow,
        into ?? sink.description,
        () => ({
          rows_written: counts.rowsWritten,
          dead_letters: counts.deadLetters,
          threshold_breaches: counts.breaches,
          duplicates_skipped: counts.duplicatesSkipped,
        }),
        (stop) => (engineExit = stop),
      );
    } finally {
      await sink.close();
    }
  } finally {
    await owner?.close();
  }
}

type Values = ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true; strict: true }>>['values'];

async function runToKafka(
  values: Values,
  machine: ReturnType<typeof importMachineFrom>,
  redact: boolean,
  io: Io,
  run: (follow: FollowSink, into: string, stored: () => Record<string, number>) => Promise<number>,
): Promise<number> {
  const [{ createKafkaClient }, { kafkaSecurityFromEnv }, { brokersFrom, loggerFrom, topicFrom }, { defaultDlqTopic }, { kafkaFollowSink }] = await Promise.all([
    import('../kafka/client.ts'),
    import('../kafka/security.ts'),
    import('./kafka-commands.ts'),
    import('../kafka/dlq.ts'),
    import('../watch/sinks.ts'),
  ]);
  const brokers = brokersFrom(values.brokers, 'watch --to-kafka');
  const topic = topicFrom(values.topic, 'watch --to-kafka');
  const dlqTopic = values['dlq-topic'] === undefined ? defaultDlqTopic(topic) : topicFrom(values['dlq-topic'], 'watch --to-kafka', 'dlq-topic');
  if (dlqTopic === topic) throw new UsageError(`--dlq-topic must differ from --topic (both are ${JSON.stringify(topic)})`);
  const partitions = positiveInt('partitions', values.partitions, 6);
  const stateDir = stateDirFrom(values);
  const log = loggerFrom(undefined, undefined, io);
  const client = createKafkaClient({ brokers, clientId: `toolcanon-watch-${process.pid}`, log, security: kafkaSecurityFromEnv() });
  const admin = await client.admin();
  let producer;
  try {
    if (await admin.ensureTopic(topic, { partitions })) log.info(`Created topic ${topic} (${partitions} partition(s)).`);
    const maxMessageBytes = await admin.maxMessageBytes(topic);
    producer = await client.producer();
    const { follow, result, secretsRedacted } = kafkaFollowSink(producer, {
      topic,
      dlqTopic,
      admin,
      redact,
      machine,
      stateDir,
      ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
      log: (line) => log.info(line),
      onDeadLetter: (d) => log.warn(`${d.source}: ${d.detail}; sent to the DLQ topic ${d.dlqTopic} as ${d.reason}`),
    });
    return await run(follow, `Kafka topic ${topic} (state in ${stateDir})`, () => ({
      records_published: result.published,
      dead_lettered: result.deadLettered.length,
      secrets_redacted: secretsRedacted(),
    }));
  } finally {
    await producer?.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}
