// `toolcanon export otlp`: flags, the run and its summary (the export itself is src/export/otlp.ts).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ClickHouseSink } from '../sink/clickhouse.ts';
import { existingDatabase, sinkTarget } from './database.ts';
import { parseArgsUsageError } from './suggest.ts';
import { checkClickHouseUrl } from './sink-flags.ts';
import { UsageError, type Io } from './io.ts';
import { OUTPUT_FORMATS, renderRows, type OutputFormat } from './format.ts';
import { parseDay, parseHarness } from '../report/scope.ts';

export const EXPORT_USAGE = `Usage: toolcanon export otlp --endpoint URL [options]

Replays what is stored as OTLP/HTTP traces, following the OpenTelemetry GenAI semantic conventions
v1.41.0: each session is one trace (an invoke_agent span), each tool call an "execute_tool <tool>"
span, each observed usage record a "chat <model>" span with gen_ai.usage.* tokens; the canonical
fields as toolcanon.* attributes. Ids are derived from session and event ids, so exporting again
sends the same spans. Prints spans exported, traces and failed; exits 1 with one line naming the
URL when the endpoint refuses the spans or cannot be reached.

Options:
  --endpoint URL             OTLP/HTTP endpoint: a base URL (http://host:4318) gets /v1/traces,
                             a URL with a path is used as it is (required)
  --protocol P               http/protobuf (default) or http/json
  --since DAY, --until DAY   first and last day exported, YYYY-MM-DD (UTC)
  --harness H                one harness only
  --include-raw-input        send each call's raw input as gen_ai.tool.call.arguments (opt-in in the
                             conventions; secrets in it were redacted when stored)
  --batch-spans N            spans per request, and rows read per page (default 1000)
  --timeout-ms N             how long one request may take (default 10000)
  --db DIR                   Embedded ClickHouse data directory (default .toolcanon/db, or $TOOLCANON_DB)
  --clickhouse URL           A ClickHouse server instead (http[s]://host:port[/database], or $TOOLCANON_CLICKHOUSE_URL)
  --format table|json|csv    Summary format (default table; json = one object per line)

Example:
  toolcanon export otlp --endpoint http://localhost:4318 --since 2026-12-01
  toolcanon export otlp --endpoint http://localhost:4318/v1/traces --protocol http/json --harness codex`;

const OPTIONS = {
  endpoint: { type: 'string' },
  protocol: { type: 'string', default: 'http/protobuf' },
  since: { type: 'string' },
  until: { type: 'string' },
  harness: { type: 'string' },
  'include-raw-input': { type: 'boolean', default: false },
  'batch-spans': { type: 'string' },
  'timeout-ms': { type: 'string' },
  db: { type: 'string' },
  clickhouse: { type: 'string' },
  format: { type: 'string', default: 'table' },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

function positive(name: string, value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^[1-9][0-9]*$/.test(value) || Number(value) > max) throw new UsageError(`--${name} must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}`);
  return Number(value);
}

export async function runExportCommand(args: readonly string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw parseArgsUsageError(error, OPTIONS, 'export');
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(EXPORT_USAGE);
    return 0;
  }
  const [target, ...extra] = positionals;
  if (target !== 'otlp' || extra.length) throw new UsageError(`export needs a target: otlp (got ${JSON.stringify(positionals.join(' '))})`);
  // Every flag is checked before the store is opened or the SDK loaded.
  const { OTLP_PROTOCOLS, exportOtlp, emptySummary, tracesUrlOf, OtlpExportError } = await import('../export/otlp.ts');
  if (values.endpoint === undefined) throw new UsageError('export otlp needs --endpoint URL (an OTLP/HTTP receiver, e.g. http://localhost:4318)');
  let url: string;
  try {
    url = tracesUrlOf(values.endpoint);
  } catch {
    throw new UsageError(`--endpoint must be an http or https URL, got ${JSON.stringify(values.endpoint)}`);
  }
  if (!/^https?:$/.test(new URL(url).protocol)) throw new UsageError(`--endpoint must use http or https, got ${JSON.stringify(values.endpoint)}`);
  const protocol = values.protocol;
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocol)) throw new UsageError(`--protocol must be one of ${OTLP_PROTOCOLS.join(', ')}, got ${JSON.stringify(protocol)}`);
  if (!(OUTPUT_FORMATS as readonly string[]).includes(values.format)) throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}, got ${JSON.stringify(values.format)}`);
  const format = values.format as OutputFormat;
  const scope = {
    since: values.since === undefined ? undefined : parseDay(values.since, '--since'),
    until: values.until === undefined ? undefined : parseDay(values.until, '--until'),
    harness: values.harness === undefined ? undefined : parseHarness(values.harness),
  };
  if (scope.since !== undefined && scope.until !== undefined && scope.since > scope.until) throw new UsageError(`--since ${scope.since} is after --until ${scope.until}`);
  const batchSpans = positive('batch-spans', values['batch-spans'], 1_000, 100_000);
  const timeoutMs = positive('timeout-ms', values['timeout-ms'], 10_000, 600_000);
  if (values.clickhouse !== undefined) checkClickHouseUrl(values.clickhouse, '--clickhouse');
  else if (process.env['TOOLCANON_CLICKHOUSE_URL']) checkClickHouseUrl(process.env['TOOLCANON_CLICKHOUSE_URL'], '$TOOLCANON_CLICKHOUSE_URL');

  // Export only reads: a database that is not there is said, never created.
  existingDatabase(values);
  // A directory another process owns (serve, watch) is read through it.
  const sink = await ClickHouseSink.open(sinkTarget(values), { createDatabase: false });
  const summary = emptySummary();
  const started = performance.now();
  let failure: string | undefined;
  try {
    io.err(`Exporting ${sink.description} to ${url} (${protocol})`);
    await exportOtlp(sink, { url, protocol: protocol as 'http/protobuf' | 'http/json', scope, includeRawInput: values['include-raw-input'], batchSpans, timeoutMs }, summary);
  } catch (error) {
    if (!(error instanceof OtlpExportError)) throw error;
    failure = error.message;
  } finally {
    await sink.close();
  }
  const elapsedMs = Math.round(performance.now() - started);
  io.out(
    renderRows(
      [
        { metric: 'spans_exported', value: summary.spansExported },
        { metric: 'spans_exported.execute_tool', value: summary.toolCallSpans },
        { metric: 'spans_exported.chat', value: summary.usageSpans },
        { metric: 'spans_exported.invoke_agent', value: summary.sessionSpans },
        { metric: 'traces', value: summary.traces },
        { metric: 'spans_failed', value: summary.spansFailed },
        { metric: 'requests', value: summary.requests },
        { metric: 'elapsed_ms', value: elapsedMs },
      ],
      format,
    ),
  );
  if (failure !== undefined) {
    io.err(`toolcanon: ${failure}`);
    return 1;
  }
  return 0;
}
