// Query benchmark of the sort keys (migration 7): the same rows in tables with the old layouts and
// in the current ones, in one embedded engine, same run: tool_calls ORDER BY event_id (before 7)
// vs (harness, session_id, event_id); token_usage (session_id, source, event_id), kept, vs the
// harness-first key that was tried and rejected (old_ here is the alternative, not the past). Prints the median of 5 runs per query and the ratio old / new
// (above 1: the new keys are faster). Usage: npx tsx bench/query-keys.ts [rows, default 10000000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolsReportSql, USAGE_REPORT_SQL } from '../src/report/sql.ts';
import { ClickHouseSink } from '../src/sink/clickhouse.ts';

const rows = Number(process.argv[2] ?? 10_000_000);
const sessions = Math.max(1, Math.floor(rows / 100));
const dir = mkdtempSync(join(tmpdir(), 'toolcanon-bench-keys-'));
const sink = await ClickHouseSink.open({ db: join(dir, 'db') });

async function run(sql: string): Promise<void> {
  await sink.client.command({ query: sql });
}

try {
  // Old layouts, as versions before 7 created them.
  await run("CREATE TABLE old_tool_calls AS tool_calls ENGINE = ReplacingMergeTree(ingested_at) PARTITION BY toYYYYMM(ts) ORDER BY (event_id)");
  await run("CREATE TABLE old_token_usage AS token_usage ENGINE = ReplacingMergeTree(ingested_at) PARTITION BY toYYYYMM(ts) ORDER BY (harness, session_id, source, event_id)");
  const harnesses = "['claude_code','codex','opencode','grok_build','grok_build_concise','grok_build_hashline','memory','lsp','skills','mcp']";
  const started = performance.now();
  for (const table of ['tool_calls', 'old_tool_calls']) {
    await run(`INSERT INTO ${table} (event_id, ts, harness, namespace, session_id, turn_id, call_id, model, tool_name, kind, label, status, input_bytes, output_bytes, source, ingested_at)
      SELECT hex(sipHash128(number)), toDateTime64('2026-06-01 00:00:00', 3, 'UTC') + toIntervalSecond(intDiv(number, 7)),
        ${harnesses}[(number % ${sessions}) % 10 + 1], ${harnesses}[(number % ${sessions}) % 10 + 1],
        concat('s-', toString(number % ${sessions})), toString(intDiv(number, 20)), toString(number), 'model-' || toString(number % 7),
        ['Read','Bash','Edit','Grep','Glob','Write','search_tool'][number % 7 + 1], ['read','execute','edit','search','search','edit','search'][number % 7 + 1], 'x',
        if(number % 23 = 0, 'error', 'ok'), number % 900, number % 5000, 'bench', now64(3)
      FROM numbers(${rows}) SETTINGS max_insert_threads = 2`);
  }
  for (const table of ['token_usage', 'old_token_usage']) {
    await run(`INSERT INTO ${table} (event_id, ts, harness, session_id, model, source, request_id, input_tokens, output_tokens, estimated_tokens, context_tokens, session_seq, ingested_at)
      SELECT hex(sipHash128(number)), toDateTime64('2026-06-01 00:00:00', 3, 'UTC') + toIntervalSecond(intDiv(number, 7)),
        ${harnesses}[(number % ${sessions}) % 10 + 1], concat('s-', toString(number % ${sessions})), 'model-' || toString(number % 7),
        if(number % 3 = 0, 'observed', 'estimated'), toString(number), if(number % 3 = 0, number % 50000, NULL), if(number % 3 = 0, number % 2000, NULL),
        if(number % 3 = 0, NULL, number % 1250), number % 180000, intDiv(number, ${sessions}), now64(3)
      FROM numbers(${rows}) SETTINGS max_insert_threads = 2`);
  }
  await run('OPTIMIZE TABLE tool_calls FINAL');
  await run('OPTIMIZE TABLE old_tool_calls FINAL');
  await run('OPTIMIZE TABLE token_usage FINAL');
  await run('OPTIMIZE TABLE old_token_usage FINAL');
  console.log(`Loaded ${rows.toLocaleString('en')} rows per table (${sessions.toLocaleString('en')} sessions) in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const session = `s-${Math.floor(sessions / 2) + 1}`;
  const queries: { name: string; sql: (tool: string, usage: string) => string }[] = [
    { name: 'report tools', sql: (t) => toolsReportSql('tool').replace('FROM tool_calls FINAL', `FROM ${t} FINAL`) },
    { name: 'report tools --harness codex', sql: (t) => toolsReportSql('tool').replace('FROM tool_calls FINAL', `FROM ${t} FINAL WHERE harness = 'codex'`) },
    { name: 'one session: its calls', sql: (t) => `SELECT tool_name, count() AS calls, sum(output_bytes) AS bytes FROM ${t} FINAL WHERE session_id = '${session}' GROUP BY tool_name` },
    { name: 'one session: its usage', sql: (_t, u) => `SELECT source, count(), sum(context_tokens) FROM ${u} FINAL WHERE session_id = '${session}' GROUP BY source` },
    { name: 'report usage', sql: (_t, u) => USAGE_REPORT_SQL.replace('FROM token_usage FINAL', `FROM ${u} FINAL`) },
  ];
  const median = async (sql: string): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await sink.queryRows(sql);
      times.push(performance.now() - t0);
    }
    return times.sort((a, b) => a - b)[2] as number;
  };
  console.log('query                           old keys ms   new keys ms   ratio old/new   (usage rows: harness-first alternative vs kept key)');
  for (const q of queries) {
    const before = await median(q.sql('old_tool_calls', 'old_token_usage'));
    const after = await median(q.sql('tool_calls', 'token_usage'));
    console.log(`${q.name.padEnd(30)} ${before.toFixed(1).padStart(11)} ${after.toFixed(1).padStart(13)} ${(before / after).toFixed(2).padStart(15)}`);
  }
} finally {
  await sink.close();
  rmSync(dir, { recursive: true, force: true });
}
