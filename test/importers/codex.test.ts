// The Codex importer end to end: the real corpus (../shared/corpus/codex, read in place)
// imported through runImport into a real embedded ClickHouse, checked against the reference
// figures of ../shared/corpus/README.md, read back from the tables (skipped loudly without the
// corpus, a failure under CI=true: see test/helpers/corpus.ts).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexImporter } from '../../src/importers/codex/index.ts';
import { listRolloutFiles } from '../../src/importers/codex/paths.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { countOf, openTempSink } from '../helpers/db.ts';

const CORPUS_DIR = corpusOrSkip('codex', 'the Codex corpus import test (test/importers/codex.test.ts)');
/** The corpus folder; read only by the suite, which is skipped when it is absent. */
const CORPUS = CORPUS_DIR ?? '';

/** Non-blank lines of every rollout, counted from the raw bytes: the records an import reads. */
function countCorpusRecords(): number {
  let n = 0;
  for (const f of listRolloutFiles([CORPUS])) for (const line of readFileSync(f, 'latin1').split('\n')) if (line.trim() !== '') n++;
  return n;
}

interface TableCounts {
  readonly toolCalls: number;
  readonly observed: number;
  readonly estimated: number;
  readonly deadLetters: number;
  readonly breaches: number;
}

async function tableCounts(sink: ClickHouseSink): Promise<TableCounts> {
  return {
    toolCalls: await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE harness = 'codex'"),
    observed: await countOf(sink, "SELECT count() AS n FROM token_usage FINAL WHERE harness = 'codex' AND source = 'observed'"),
    estimated: await countOf(sink, "SELECT count() AS n FROM token_usage FINAL WHERE harness = 'codex' AND source = 'estimated'"),
    deadLetters: await countOf(sink, 'SELECT count() AS n FROM dead_letters FINAL'),
    breaches: await countOf(sink, "SELECT count() AS n FROM threshold_breaches FINAL WHERE harness = 'codex'"),
  };
}

describe.skipIf(!CORPUS_DIR)('codex import of the real corpus into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let first: ImportSummary;
  let firstMs: number;

  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('codex-import'));
    const started = performance.now();
    first = await runImport(codexImporter, [CORPUS], sink);
    firstMs = performance.now() - started;
  });
  afterAll(async () => cleanup?.());

  it('reads every rollout and every record', () => {
    expect(first.filesSeen).toBe(63);
    expect(first.filesRead).toBe(63);
    expect(first.recordsRead).toBe(countCorpusRecords());
    // 1 979 token_count events with figures, 369 of them repeats of the previous total.
    expect(first.skippedRecords['token_count:repeated']).toBe(369);
    expect(first.bytesParsed).toBeGreaterThan(12_000_000);
    expect(firstMs).toBeGreaterThan(0);
  });

  it('sums observed usage to the deltas of the cumulative totals, over 22 sessions', async () => {
    const [sums] = await sink.queryRows<{ input: string; cached: string; output: string; reasoning: string; sessions: string; requests: string }>(
      `SELECT sum(input_tokens) AS input, sum(cache_read_tokens) AS cached, sum(output_tokens) AS output,
              sum(reasoning_tokens) AS reasoning, uniqExact(session_id) AS sessions, count() AS requests
       FROM token_usage FINAL WHERE harness = 'codex' AND source = 'observed'`,
    );
    expect(sums).toEqual({
      input: '150616567',
      cached: '146882816',
      output: '694731',
      reasoning: '400768',
      sessions: '22',
      requests: String(1979 - 369),
    });
  });

  it('stores the 1 889 tool calls: shell 1 194, update_plan 86, 609 MCP calls over 9 servers', async () => {
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE harness = 'codex'")).toBe(1889);
    const byTool = await sink.queryRows<{ tool_name: string; n: string }>(
      "SELECT tool_name, count() AS n FROM tool_calls FINAL WHERE namespace = 'codex' GROUP BY tool_name ORDER BY tool_name",
    );
    expect(Object.fromEntries(byTool.map((r) => [r.tool_name, Number(r.n)]))).toEqual({ shell: 1194, update_plan: 86 });
    const [mcp] = await sink.queryRows<{ n: string; servers: string[]; unattributed: string }>(
      "SELECT count() AS n, arraySort(groupUniqArray(mcp_server)) AS servers, countIf(mcp_server = '') AS unattributed FROM tool_calls FINAL WHERE namespace = 'mcp'",
    );
    expect(Number(mcp?.n)).toBe(609);
    expect(Number(mcp?.unattributed)).toBe(0);
    expect(mcp?.servers).toEqual(['context7', 'git', 'hoge', 'member1', 'member2', 'sequential-thinking', 'serena', 'tavily-search', 'time']);
    // Old-style names are stored as logged (`server__tool`), attributed through the projection.
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE namespace = 'mcp' AND tool_name = concat(mcp_server, '__', mcp_tool)")).toBe(609);
  });

  it('joins every call with its output and reads its outcome', async () => {
    const rows = await sink.queryRows<{ status: string; n: string; with_duration: string }>(
      "SELECT status, count() AS n, countIf(duration_ms IS NOT NULL) AS with_duration FROM tool_calls FINAL WHERE harness = 'codex' GROUP BY status ORDER BY status",
    );
    // Reference: 1 114 shell outputs are 0.4x JSON with metadata.exit_code (40 of them non-zero);
    // 80 more are Codex failure texts (sandbox denials, apply_patch errors, one argument error).
    expect(rows.map((r) => [r.status, Number(r.n), Number(r.with_duration)])).toEqual([
      ['error', 120, 40],
      ['ok', 1769, 1074],
    ]);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE status = 'error' AND error LIKE 'exit code %'")).toBe(40);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE harness = 'codex' AND (session_id = '' OR source NOT LIKE '%.jsonl:%')")).toBe(0);
    // 347 calls are made before any turn_context or session_meta names a model (legacy and early
    // builds; counted from the raw files by a separate script: the latest turn_context.model, else
    // the session_meta's): their model is unknown (''), flagged, never the guess gpt-5 (issue 29).
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE harness = 'codex' AND model = '' AND has(flags, 'model_unknown')")).toBe(347);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE harness = 'codex' AND (model = '') != has(flags, 'model_unknown')")).toBe(0);
  });

  it('accounts for every event: events in = rows out + dead letters', async () => {
    const t = await tableCounts(sink);
    expect(first.eventsEmitted).toBe(1889 + 1610);
    expect(first.counts.eventsRead).toBe(first.eventsEmitted);
    expect(first.counts.rowsWritten + first.counts.deadLetters).toBe(first.eventsEmitted);
    expect(t.toolCalls + t.observed + t.deadLetters).toBe(first.eventsEmitted);
    expect(t.deadLetters).toBe(0);
    // The corpus's flags: 7 calls whose inputs hold `GITHUB_TOKEN=ghp_` + 26 characters (a token's
    // shape, redacted; the placeholders `ghp_xxx`, `ghp_***` and `ghp_...` of 4 more calls are not
    // secrets and stay since issue 30), and the 347 calls of no known model.
    expect(first.counts.flaggedRows).toEqual({ redacted: 7, model_unknown: 347 });
  });

  it('importing the same directory twice changes no count', async () => {
    const before = await tableCounts(sink);
    const again = await runImport(codexImporter, [CORPUS], sink);
    expect(again.filesUnchanged).toBe(63);
    expect(again.eventsEmitted).toBe(0);
    expect(await tableCounts(sink)).toEqual(before);
  });

  it('re-parsing every file (import state cleared) writes the same events: still no count changes', async () => {
    const before = await tableCounts(sink);
    await sink.client.command({ query: 'TRUNCATE TABLE import_files' });
    const again = await runImport(codexImporter, [CORPUS], sink);
    expect(again.filesRead).toBe(63);
    expect(again.eventsEmitted).toBe(first.eventsEmitted);
    expect(await tableCounts(sink)).toEqual(before);
    const [sums] = await sink.queryRows<{ input: string }>("SELECT sum(input_tokens) AS input FROM token_usage FINAL WHERE harness = 'codex' AND source = 'observed'");
    expect(sums?.input).toBe('150616567');
  });
});
