// The toolcanon command line: replay, validate, report, query, catalogue.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { renderCatalogueMarkdown } from '../catalogue/index.ts';
import { decodeEvent, DEFAULT_LIMITS, type DecodeLimits } from '../decode/event.ts';
import { emptyCounts, replayFiles, type PipelineCounts } from '../pipeline.ts';
import { ClickHouseSink } from '../sink/clickhouse.ts';
import { InputError, listInputFiles, openInput, readLines } from '../source/file.ts';
import { accountingConfig } from './accounting-flags.ts';
import { UsageError, type Io } from './io.ts';
import { OUTPUT_FORMATS, renderRows, type OutputFormat, type Row } from './format.ts';
import { createProgressBar } from './progress.ts';
import {
  BREACHES_REPORT_SQL,
  DEAD_LETTERS_REPORT_SQL,
  DISCOVERY_BY_MODEL_SQL,
  DISCOVERY_BY_TOOL_SQL,
  DISCOVERY_REPORT_GROUPINGS,
  MCP_REPORT_SQL,
  DRIFT_REPORT_SQL,
  TOOL_REPORT_GROUPINGS,
  toolsReportSql,
  USAGE_REPORT_SQL,
  type ToolReportGrouping,
} from './reports.ts';
import { IMPORTER_IDS } from '../importers/types.ts';
import { isImporterId, loadImporter } from '../importers/registry.ts';
import { runImport, type ImportSummary } from '../importers/run.ts';

const USAGE = `Usage: toolcanon <command> [options]

Commands:
  replay <paths…|->          Replay JSONL events (files, directories of *.jsonl, or - for stdin)
                             into ClickHouse and print a summary
  import <${IMPORTER_IDS.join('|')}> [paths…]
                             Import the logs a harness already writes (default: its usual folder);
                             incremental: unchanged files are skipped, grown files add what is new
  validate <paths…|->        Check events without writing; one line per bad event; exit 1 if any
  report tools [--by tool|namespace|kind]
                             Calls per namespace / kind / tool, errors, read-only share
  report usage               Observed tokens per harness / model / day, by kind, beside estimates
  report breaches            Sessions that crossed the context threshold: when, at what %
  report drift               Estimated (bytes/4) vs observed tokens per harness / model / content class
  report dead-letters        Dead letters per reason, with an example source
  report mcp                 Per MCP server: share of time connected, reconnects (since when), stale
                             disconnects, restart-policy flags, tools by visibility, calls and errors
  report discovery [--by model|tool]
                             Tool discovery: searches per turn, budget exhaustion, not-in-active-set
                             recoveries per model; per tool: reached through search or directly
  query "<SQL>"              Run SQL against the analytics tables
  consume --brokers H:P --topic T [--group G]
                             Stream worker: consume events from Kafka into ClickHouse
  produce <paths…> --brokers H:P --topic T
                             Publish JSONL events to Kafka, keyed by session_id
  catalogue                  Print the tool catalogue (Markdown table)

Options:
  --format table|json|csv    Output format (json = one object per line); default table
  --db DIR                   Embedded ClickHouse data directory (default .toolcanon/db, or $TOOLCANON_DB)
  --clickhouse URL           Write to a ClickHouse server instead (or $TOOLCANON_CLICKHOUSE_URL;
                             user and password from $TOOLCANON_CLICKHOUSE_USER / _PASSWORD)
  --threshold-pct N          Context threshold for breaches, percent (default 85)
  --headroom-tokens N        Headroom: moves the trigger earlier by N tokens (default 0)
  --models FILE              JSON { "model": contextWindowTokens } laid over the shipped table
  --max-event-bytes N        Largest accepted event (default ${DEFAULT_LIMITS.maxEventBytes})
  --max-depth N              Deepest accepted JSON nesting (default ${DEFAULT_LIMITS.maxDepth})
  --no-progress              Never draw a progress bar
  -h, --help                 Show this help
`;

const OPTIONS = {
  format: { type: 'string', default: 'table' },
  db: { type: 'string' },
  clickhouse: { type: 'string' },
  by: { type: 'string' },
  'threshold-pct': { type: 'string' },
  'headroom-tokens': { type: 'string' },
  models: { type: 'string' },
  'max-event-bytes': { type: 'string' },
  'max-depth': { type: 'string' },
  'no-progress': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];


function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[1-9][0-9]*$/.test(value)) throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

function parseFormat(value: string): OutputFormat {
  if ((OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}, got ${JSON.stringify(value)}`);
}

function summaryRows(counts: PipelineCounts, elapsedMs: number): Row[] {
  const rows: Row[] = [
    { metric: 'events_read', value: counts.eventsRead },
    { metric: 'rows_written', value: counts.rowsWritten },
    { metric: 'rows_written.tool_calls', value: counts.toolCallRows },
    { metric: 'rows_written.usage', value: counts.usageRows },
    { metric: 'rows_written.mcp_events', value: counts.mcpEventRows },
    { metric: 'dead_letters', value: counts.deadLetters },
  ];
  for (const [reason, n] of Object.entries(counts.deadLettersByReason)) rows.push({ metric: `dead_letters.${reason}`, value: n });
  for (const [flag, n] of Object.entries(counts.flaggedRows)) rows.push({ metric: `flagged_rows.${flag}`, value: n });
  rows.push(
    { metric: 'estimates_written', value: counts.estimateRows },
    { metric: 'threshold_breaches', value: counts.breaches },
    { metric: 'duplicates_skipped', value: counts.duplicatesSkipped },
    { metric: 'mcp_tool_registrations', value: counts.mcpToolRegistrations },
    { metric: 'mcp_server_state_rows', value: counts.mcpServerStateRows },
    { metric: 'discovery_events', value: counts.discoveryEvents },
    { metric: 'blank_lines_skipped', value: counts.blankLines },
    { metric: 'bytes_read', value: counts.bytesRead },
    { metric: 'elapsed_ms', value: Math.round(elapsedMs) },
    { metric: 'events_per_s', value: elapsedMs > 0 ? Math.round((counts.eventsRead * 1000) / elapsedMs) : 0 },
  );
  return rows;
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

async function withSink<T>(values: { db?: string | undefined; clickhouse?: string | undefined }, run: (sink: ClickHouseSink) => Promise<T>): Promise<T> {
  const sink = await ClickHouseSink.open({ db: values.db, clickhouseUrl: values.clickhouse });
  try {
    return await run(sink);
  } finally {
    await sink.close();
  }
}

export async function main(argv: readonly string[], io: Io): Promise<number> {
  // The Kafka commands have options of their own (and the only imports of the Kafka client).
  if (argv[0] === 'consume' || argv[0] === 'produce') {
    const kafka = await import('./kafka-commands.ts');
    return argv[0] === 'consume' ? kafka.runConsumeCommand(argv.slice(1), io) : kafka.runProduceCommand(argv.slice(1), io);
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') {
    io.out(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  const format = parseFormat(values.format);
  const limits: DecodeLimits = {
    maxEventBytes: positiveInt('max-event-bytes', values['max-event-bytes'], DEFAULT_LIMITS.maxEventBytes),
    maxDepth: positiveInt('max-depth', values['max-depth'], DEFAULT_LIMITS.maxDepth),
  };

  switch (command) {
    case 'replay': {
      if (rest.length === 0) throw new UsageError('replay needs at least one path (a file, a directory, or - for stdin)');
      const files = listInputFiles(rest);
      const started = performance.now();
      const counts = await withSink(values, async (sink) => {
        io.err(`Replaying ${files.length} input(s) into ${sink.description}`);
        const progress = createProgressBar(io.isTty && !values['no-progress'], files.reduce((n, f) => n + f.bytes, 0));
        try {
          return await replayFiles(files, sink, { limits, accounting: accountingConfig(values), onProgress: progress.update });
        } finally {
          progress.done();
        }
      });
      io.out(renderRows(summaryRows(counts, performance.now() - started), format));
      return 0;
    }
    case 'import': {
      const [which, ...paths] = rest;
      if (which === undefined || !isImporterId(which)) throw new UsageError(`import needs one of ${IMPORTER_IDS.join(', ')}`);
      const importer = await loadImporter(which);
      const targets = paths.length ? paths : importer.defaultPaths();
      if (targets.length === 0) throw new UsageError(`import ${which} needs at least one file or folder (it has no default location)`);
      const started = performance.now();
      const summary = await withSink(values, async (sink) => {
        io.err(`Importing ${which} logs from ${targets.join(', ')} into ${sink.description}`);
        const progress = createProgressBar(io.isTty && !values['no-progress'], 1);
        try {
          return await runImport(importer, targets, sink, {
            limits,
            accounting: accountingConfig(values),
            onProgress: (filesDone, filesTotal, bytesDone, bytesTotal) => progress.update(bytesDone, bytesTotal, `${filesDone}/${filesTotal} files`),
          });
        } finally {
          progress.done();
        }
      });
      io.out(renderRows(importSummaryRows(summary, performance.now() - started), format));
      return 0;
    }
    case 'validate': {
      if (rest.length === 0) throw new UsageError('validate needs at least one path');
      const counts = emptyCounts();
      const bad: Row[] = [];
      const warnings: Row[] = [];
      for (const file of listInputFiles(rest)) {
        for await (const line of readLines(openInput(file), file.path, undefined, () => counts.blankLines++)) {
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
      const [what] = rest;
      if (what === 'discovery') {
        const by = values.by;
        if (by !== undefined && !(DISCOVERY_REPORT_GROUPINGS as readonly string[]).includes(by)) throw new UsageError(`--by must be one of ${DISCOVERY_REPORT_GROUPINGS.join(', ')} for report discovery`);
        await withSink(values, async (sink) => {
          // Both tables unless one is asked for; machine formats get one table (per model by default).
          const both = by === undefined && format === 'table';
          if (both || by !== 'tool') {
            if (both) io.out('Discovery per model');
            io.out(renderRows(await sink.queryRows<Row>(DISCOVERY_BY_MODEL_SQL), format));
          }
          if (both || by === 'tool') {
            if (both) io.out('\nDiscovery per MCP tool');
            io.out(renderRows(await sink.queryRows<Row>(DISCOVERY_BY_TOOL_SQL), format));
          }
        });
        return 0;
      }
      if (what === 'tools') {
        const by = values.by ?? 'tool';
        if (!(TOOL_REPORT_GROUPINGS as readonly string[]).includes(by)) throw new UsageError(`--by must be one of ${TOOL_REPORT_GROUPINGS.join(', ')}`);
        const rows = await withSink(values, (sink) => sink.queryRows<Row>(toolsReportSql(by as ToolReportGrouping)));
        io.out(renderRows(rows, format));
        return 0;
      }
      const sql = { 'dead-letters': DEAD_LETTERS_REPORT_SQL, usage: USAGE_REPORT_SQL, breaches: BREACHES_REPORT_SQL, drift: DRIFT_REPORT_SQL, mcp: MCP_REPORT_SQL }[what ?? ''];
      if (sql === undefined) throw new UsageError(`unknown report ${JSON.stringify(what ?? '')}: expected tools, usage, breaches, drift, mcp, discovery or dead-letters`);
      const rows = await withSink(values, (sink) => sink.queryRows<Row>(sql));
      io.out(renderRows(rows, format));
      return 0;
    }
    case 'query': {
      const [sql, ...extra] = rest;
      if (sql === undefined || extra.length) throw new UsageError('query takes exactly one SQL argument (quote it)');
      const rows = await withSink(values, (sink) => sink.queryRows<Row>(sql));
      io.out(renderRows(rows, format));
      return 0;
    }
    case 'catalogue':
      io.out(renderCatalogueMarkdown());
      return 0;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

/** Runs the CLI against the process: errors become one clear line on stderr and an exit code. */
export async function run(argv: readonly string[]): Promise<void> {
  const io: Io = {
    out: (t) => process.stdout.write(`${t}\n`),
    err: (t) => process.stderr.write(`${t}\n`),
    isTty: process.stderr.isTTY === true,
  };
  try {
    process.exitCode = await main(argv, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`toolcanon: ${error.message}\nRun 'toolcanon --help' for usage.`);
      process.exitCode = 2;
    } else if (error instanceof InputError) {
      io.err(`toolcanon: ${error.message}`);
      process.exitCode = 1;
    } else {
      const e = error as Error & { code?: unknown };
      io.err(`toolcanon: ${e.message ?? String(error)}`);
      process.exitCode = 1;
    }
  }
  if (argv[0] === 'consume') {
    // The worker has stopped and said so; should a Kafka client still be connecting (a stop
    // during a slow start), it must not hold the process past the bounded shutdown.
    setTimeout(() => process.exit(), LINGER_AFTER_CONSUME_MS).unref();
  }
}

/** How long a `consume` process may linger after its worker stopped before it exits regardless. */
const LINGER_AFTER_CONSUME_MS = 5_000;
