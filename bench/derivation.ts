// Issue 31 step 2's measure: what one batch costs when the server (MCP lifecycle) or the session
// (discovery) it touches already has K stored events, K = 1 000 and K = 1 000 000. The batch:
// 100 mcp_status events of that server, then 100 tool-search calls of that session (each a
// discovery observation), replayed through the pipeline into the embedded engine. The stored
// history is inserted with SQL first (a replay of a million events into one server would itself
// pay the cost measured here on every batch). Today both derivations read the whole stored
// history of what a batch touches (and, for the lifecycle, compares every state row derived from
// it with the stored ones): the ratio shows it. Target (issue 31): <= 1.2.
//   npx tsx bench/derivation.ts [K=1000000] [runs=3]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayPaths } from '../src/pipeline/batch-writer.ts';
import { ClickHouseSink } from '../src/sink/clickhouse.ts';

const BIG = Number(process.argv[2] ?? 1_000_000);
const RUNS = Number(process.argv[3] ?? 3);
const SESSION = 'bench-derivation';
const SERVER = 'github';
const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-bench-derivation-'));

/** K stored mcp_status events of the server and K stored discovery rows of the session, a second apart, in 2026-11. */
async function history(sink: ClickHouseSink, k: number): Promise<void> {
  await sink.client.command({ query: `INSERT INTO mcp_events (event_id, ts, harness, session_id, agent_id, server, client_id, event_kind, transport, state, error, raw, source, ingested_at)
    SELECT concat('h-', toString(number)), toDateTime64('2026-11-01 00:00:00', 3, 'UTC') + toIntervalSecond(number), 'grok_build', '${SESSION}', '', '${SERVER}', 'github#1', 'mcp_status', 'stdio',
           if(number % 2 = 0, 'connected', 'reconnecting'), '', '', 'bench', now64(3, 'UTC')
    FROM numbers(${k})` });
  await sink.client.command({ query: `INSERT INTO discovery_events (event_id, ts, harness, session_id, agent_id, turn_id, model, discovery_kind, tool_name, status, query, result_tools, reported_budget_exhausted, refused_tool, recovery_query, called_tool, turn_search_seq, budget_refusal, recovery_searched, recovered, after_search, flags, source, ingested_at, computed_at)
    SELECT concat('d-', toString(number)), toDateTime64('2026-11-01 00:00:00', 3, 'UTC') + toIntervalSecond(number), 'grok_build_concise', '${SESSION}', '', concat('t-', toString(intDiv(number, 10))), 'grok-4', 'search', 'search_tool', 'ok',
           'issues', [concat('github__tool_', toString(number % 500))], false, '', '', '', (number % 10) + 1, false, false, false, false, [], 'bench', now64(3, 'UTC'), now64(3, 'UTC')
    FROM numbers(${k})` });
}

/** The batch: 100 status events of the server and 100 tool searches of the session, after the history. */
function batchFile(run: number): string {
  const lines: string[] = [];
  for (let i = 0; i < 100; i++) {
    const ts = new Date(Date.parse('2026-12-01T00:00:00Z') + (run === RUNS ? -1 : run) * 1_000_000 + 1_000_000 + i * 1000).toISOString();
    lines.push(JSON.stringify({ schema: 'toolcanon.event/v1', type: 'mcp_status', ts, harness: 'grok_build', session_id: SESSION, server: SERVER, client_id: 'github#1', transport: 'stdio', state: i % 2 === 0 ? 'connected' : 'reconnecting' }));
    // A search (a discovery observation) in a turn of its own, and a call of a tool it listed.
    lines.push(JSON.stringify({ schema: 'toolcanon.event/v1', type: 'tool_call', ts, harness: 'grok_build_concise', session_id: SESSION, turn_id: `b-${run}-${i}`, call_id: `c-${run}-${i}`, model: 'grok-4', tool: 'search_tool', status: 'ok', input: { query: 'issues' }, output: JSON.stringify({ results: [{ server: 'github', tools: [{ name: `tool_${i}` }] }] }) }));
  }
  const file = join(tmp, `batch-${run}.jsonl`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

async function measure(k: number): Promise<number[]> {
  const db = join(tmp, `db-${k}`);
  const sink = await ClickHouseSink.open({ db });
  const times: number[] = [];
  try {
    await history(sink, k);
    // A database that derived its events as they came holds their derived rows: the first batch
    // derives the history inserted above once (rows stored before issue 31 step 2, without their
    // state, are derived so once too), untimed.
    await replayPaths([batchFile(RUNS)], sink);
    // And has merged them (the merges of a million rows just inserted would run during the timed batches).
    for (const table of ['mcp_events', 'mcp_server_state', 'discovery_events', 'derivation_state']) await sink.client.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
    for (let run = 0; run < RUNS; run++) {
      const file = batchFile(run);
      const t0 = performance.now();
      await replayPaths([file], sink);
      times.push(performance.now() - t0);
    }
  } finally {
    await sink.close();
  }
  return times;
}

try {
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const small = await measure(1_000);
  const big = await measure(BIG);
  console.log(`one batch (100 MCP status events + 100 tool searches) into a server and a session with 1,000 stored events each: ${small.map((t) => t.toFixed(0)).join(', ')} ms (median ${median(small).toFixed(0)})`);
  console.log(`the same with ${BIG.toLocaleString('en')} stored events each: ${big.map((t) => t.toFixed(0)).join(', ')} ms (median ${median(big).toFixed(0)})`);
  console.log(`ratio ${(median(big) / median(small)).toFixed(1)} (target <= 1.2: a derivation loads the last state per key, not the history)`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
