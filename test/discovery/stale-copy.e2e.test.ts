// Discovery rows heal (issue 29, item 3): a call first seen pending and later finished (here a
// use_tool call refused as "not in active set") keeps the finished copy in discovery_events,
// whether both copies come in one batch, in two batches, in two runs, or from a Codex rollout
// that grows between two imports; two finished copies rank as in tool_calls (more bytes of
// input and output). And a replay of what is stored writes no discovery row again, so plain
// SQL (without FINAL) counts each event once. All in a real embedded ClickHouse.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexImporter } from '../../src/importers/codex/index.ts';
import { runImport } from '../../src/pipeline/import.ts';
import { replayPaths } from '../../src/pipeline/batch-writer.ts';
import { DISCOVERY_BY_MODEL_SQL } from '../../src/report/sql.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, openTempSink } from '../helpers/db.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const REFUSAL = "Tool 'archiveRun' not in active set. Call searchTools(query='archiveRun') to discover it, or use one of: read_file, bash, search_tool, use_tool";

let sink: ClickHouseSink;
let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ sink, dir, cleanup } = await openTempSink('discovery-stale'));
});
afterAll(async () => cleanup?.());

/** One use_tool call of exports__archiveRun in session `session`: pending, or refused. */
function useTool(session: string, status: 'pending' | 'error', model = 'grok-4'): string {
  return JSON.stringify({
    schema: 'toolcanon.event/v1', type: 'tool_call', ts: '2026-12-12T10:18:03.900Z', harness: 'grok_build_concise', session_id: session,
    turn_id: 'turn-1', call_id: 'call-archive-0', model, tool: 'use_tool', input: { tool_name: 'exports__archiveRun', tool_input: { job_id: 'exp_7f3a' } },
    status, ...(status === 'error' ? { error: REFUSAL, duration_ms: 0 } : {}),
  });
}

function file(name: string, ...lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

async function discoveryOf(session: string): Promise<{ discovery_kind: string; status: string; refused_tool: string }[]> {
  return sink.queryRows({ query: 'SELECT discovery_kind, status, refused_tool FROM discovery_events FINAL WHERE session_id = {s:String}', query_params: { s: session } });
}

const refused = [{ discovery_kind: 'refusal', status: 'error', refused_tool: 'archiveRun' }];

describe('a call first seen pending, then refused as not in active set', () => {
  it('keeps the refusal when both copies come in one batch', async () => {
    await replayPaths([file('one-batch.jsonl', useTool('s-one-batch', 'pending'), useTool('s-one-batch', 'error'))], sink);
    expect(await discoveryOf('s-one-batch')).toEqual(refused);
  });

  it('keeps the refusal when the copies come in two batches of one run', async () => {
    await replayPaths([file('two-batches.jsonl', useTool('s-two-batches', 'pending'), useTool('s-two-batches', 'error'))], sink, { batch: { batchMaxRows: 1, batchMaxBytes: 1 << 30 } });
    expect(await discoveryOf('s-two-batches')).toEqual(refused);
  });

  it('keeps the refusal over two runs, and over two replays of both files in either order', async () => {
    const pending = file('run-pending.jsonl', useTool('s-two-runs', 'pending'));
    const error = file('run-error.jsonl', useTool('s-two-runs', 'error'));
    await replayPaths([pending], sink);
    expect(await discoveryOf('s-two-runs')).toEqual([{ discovery_kind: 'call', status: 'pending', refused_tool: '' }]);
    await replayPaths([error], sink);
    expect(await discoveryOf('s-two-runs')).toEqual(refused);
    // Replayed again, in both orders: the pending copy never comes back.
    await replayPaths([pending, error], sink);
    await replayPaths([error, pending], sink);
    await replayPaths([pending], sink);
    expect(await discoveryOf('s-two-runs')).toEqual(refused);
  });

  it('is counted by report discovery once the refusal arrives in a later run', async () => {
    await replayPaths([file('report-pending.jsonl', useTool('s-report', 'pending', 'grok-stale-test'))], sink);
    await replayPaths([file('report-error.jsonl', useTool('s-report', 'error', 'grok-stale-test'))], sink);
    const [row] = (await sink.queryRows<Record<string, unknown>>(DISCOVERY_BY_MODEL_SQL)).filter((r) => r['model'] === 'grok-stale-test');
    expect(row).toMatchObject({ not_in_active_set: '1' });
  });

  it('keeps the refusal when a Codex rollout grows between two imports', async () => {
    const id = '0199bf24-0000-7000-8000-00000000a7c1';
    const rec = (ts: string, type: string, payload: Record<string, unknown>): string => JSON.stringify({ timestamp: ts, type, payload });
    const folder = join(dir, 'codex-sessions');
    mkdirSync(folder);
    const rollout = join(folder, `rollout-2025-10-07T23-48-07-${id}.jsonl`);
    writeFileSync(
      rollout,
      [
        rec('2025-10-07T14:55:00.000Z', 'session_meta', { id, timestamp: '2025-10-07T14:55:00.000Z', cli_version: '0.44.0' }),
        rec('2025-10-07T14:55:01.000Z', 'turn_context', { model: 'gpt-5-codex' }),
        rec('2025-10-07T14:55:02.000Z', 'response_item', { type: 'function_call', name: 'exports__archiveRun', arguments: '{"job_id":"exp_7f3a"}', call_id: 'call_archive' }),
      ].join('\n') + '\n',
    );
    await runImport(codexImporter, [folder], sink);
    expect(await discoveryOf(id)).toEqual([{ discovery_kind: 'call', status: 'pending', refused_tool: '' }]);
    const output = JSON.stringify({ content: [{ type: 'text', text: REFUSAL }], isError: true });
    appendFileSync(rollout, rec('2025-10-07T14:55:02.100Z', 'response_item', { type: 'function_call_output', call_id: 'call_archive', output }) + '\n');
    const grown = await runImport(codexImporter, [folder], sink);
    expect(grown.eventsEmitted).toBe(1);
    expect(await sink.queryRows({ query: 'SELECT status FROM tool_calls FINAL WHERE session_id = {s:String}', query_params: { s: id } })).toEqual([{ status: 'error' }]);
    expect(await discoveryOf(id)).toEqual(refused);
  });
});

describe('two finished copies of one call rank as in tool_calls', () => {
  /** A search whose copy with the result (more bytes) must win over the copy without it. */
  function search(session: string, withResult: boolean): string {
    return JSON.stringify({
      schema: 'toolcanon.event/v1', type: 'tool_call', ts: '2026-12-12T10:10:00.000Z', harness: 'grok_build_concise', session_id: session, turn_id: 'turn-1',
      call_id: 'call-search-0', model: 'grok-4', tool: 'search_tool', input: { query: 'archive' }, status: 'ok',
      ...(withResult ? { output: JSON.stringify({ results: [{ server: 'exports', tools: [{ name: 'archiveRun' }] }] }) } : {}),
    });
  }

  async function listed(session: string): Promise<string[][]> {
    const rows = await sink.queryRows<{ result_tools: string[] }>({ query: 'SELECT result_tools FROM discovery_events FINAL WHERE session_id = {s:String}', query_params: { s: session } });
    return rows.map((r) => r.result_tools);
  }

  it('replaces a stored copy without output by a later one with it', async () => {
    await replayPaths([file('search-small.jsonl', search('s-rank-up', false))], sink);
    expect(await listed('s-rank-up')).toEqual([[]]);
    await replayPaths([file('search-big.jsonl', search('s-rank-up', true))], sink);
    expect(await listed('s-rank-up')).toEqual([['exports__archiveRun']]);
  });

  it('keeps a stored copy with output over a later one without it', async () => {
    await replayPaths([file('search-big-first.jsonl', search('s-rank-keep', true))], sink);
    await replayPaths([file('search-small-later.jsonl', search('s-rank-keep', false))], sink);
    expect(await listed('s-rank-keep')).toEqual([['exports__archiveRun']]);
  });
});

describe('plain SQL over discovery_events', () => {
  it('counts each event once after two replays of fixtures/: a replay of what is stored writes no discovery row', async () => {
    await sink.client.command({ query: 'TRUNCATE TABLE discovery_events' });
    await sink.client.command({ query: 'TRUNCATE TABLE tool_calls' });
    await replayPaths([join(ROOT, 'fixtures')], sink);
    const once = await countOf(sink, 'SELECT count() AS n FROM discovery_events FINAL');
    expect(once).toBeGreaterThan(50);
    await replayPaths([join(ROOT, 'fixtures')], sink);
    expect(await countOf(sink, 'SELECT count() AS n FROM discovery_events FINAL')).toBe(once);
    expect(await countOf(sink, 'SELECT count() AS n FROM discovery_events')).toBe(once);
  });
});
