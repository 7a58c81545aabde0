// Issue 29 item 5 (the importer's part): no invented facts.
// - A rollout that names no model (Codex Desktop, cli 0.128: its session_meta has no `model`
//   and no turn_context is written) gave its calls the model `gpt-5`; now the model is unknown:
//   stored '' with the row flag `model_unknown`, and `report usage` shows "unknown" (unpriced).
// - A `web_search_call` without an id (cli 0.125) takes the `call_id` of its `web_search_end`.
//
// The records follow real shapes: session_meta of cli 0.128 as Codex writes it (fields per
// ../shared/research/harness-formats.md §c "session_meta.payload": id, timestamp, cwd, originator,
// cli_version, source, model_provider; no model), task_started with turn_id and started_at
// (0.128), function_call/function_call_output and token_count as in the cxstat corpus
// (../shared/corpus/codex), a web_search_call with `status` and `action{type,query,queries}`
// but no id, followed by the `web_search_end{call_id, query, action}` that codex-rs derives from
// the same item (event_mapping.rs: WebSearchCall → WebSearchEnd, call_id = the item's id; shape
// as in a public Codex Desktop rollout excerpt of 2026-06-23). The expected figures below are
// counted by hand from these records, not by the importer.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseRollout, rolloutReading, UNKNOWN_MODEL } from '../../src/importers/codex/parser.ts';
import { stableEventId } from '../../src/importers/envelope.ts';
import { makeTempDir } from '../helpers/db.ts';
import { expectChunkInvariant } from './chunks.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('codex-unknown-model');
afterAll(() => tmp.cleanup());

const SESSION = '019de9aa-3a00-7010-bd9f-a6ee71559357';
const NAME = `rollout-2026-05-02T10-09-00-${SESSION}.jsonl`;
const WS_1 = 'ws_0125cc88504caca9016a3a383106a081948bc2f85f78e2d10c';
const WS_2 = 'ws_0125cc88504caca9016a3a38332b8c819489af1925a7afd047';

type Rec = Readonly<Record<string, unknown>>;
const env = (ts: string, type: string, payload: Rec): Rec => ({ timestamp: ts, type, payload });
const searchAction = { type: 'search', query: 'site:help.openai.com export ChatGPT data', queries: ['site:help.openai.com export ChatGPT data', 'ChatGPT data export'] };
const openAction = { type: 'open_page', url: 'https://help.openai.com/en/articles/7260999' };

const RECORDS: readonly Rec[] = [
  env('2026-05-02T17:09:04.407Z', 'session_meta', {
    id: SESSION,
    timestamp: '2026-05-02T17:09:00.555Z',
    cwd: '/repo',
    originator: 'Codex Desktop',
    cli_version: '0.128.0',
    source: 'vscode',
    model_provider: 'openai',
  }),
  env('2026-05-02T17:09:05.000Z', 'event_msg', { type: 'task_started', turn_id: 't1', started_at: '2026-05-02T17:09:05.000Z', model_context_window: 258400 }),
  env('2026-05-02T17:09:06.000Z', 'event_msg', { type: 'user_message', message: 'find how to export my data', images: [], local_images: [], text_elements: [] }),
  // line 4: a search without an id; line 6 its end (the actions are the same object, written in another key order)
  env('2026-05-02T17:09:07.000Z', 'response_item', { type: 'web_search_call', status: 'completed', action: searchAction }),
  env('2026-05-02T17:09:07.100Z', 'response_item', { type: 'reasoning', summary: [], encrypted_content: 'gAAAA' }),
  env('2026-05-02T17:09:07.200Z', 'event_msg', { type: 'web_search_end', call_id: WS_1, query: searchAction.query, action: { queries: searchAction.queries, query: searchAction.query, type: 'search' } }),
  // line 7: a second search, line 8 its end
  env('2026-05-02T17:09:08.000Z', 'response_item', { type: 'web_search_call', status: 'completed', action: openAction }),
  env('2026-05-02T17:09:08.100Z', 'event_msg', { type: 'web_search_end', call_id: WS_2, query: openAction.url, action: openAction }),
  // line 9: a search whose end was not persisted (the default "Limited" mode writes none)
  env('2026-05-02T17:09:09.000Z', 'response_item', { type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'codex rollout format' } }),
  env('2026-05-02T17:09:10.000Z', 'response_item', { type: 'function_call', name: 'exec_command', arguments: '{"cmd":"ls"}', call_id: 'call_ZX8V1' }),
  env('2026-05-02T17:09:10.500Z', 'response_item', { type: 'function_call_output', call_id: 'call_ZX8V1', output: 'Chunk ID: 9e8662\nWall time: 0.0100 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nREADME.md\n' }),
  env('2026-05-02T17:09:11.000Z', 'event_msg', {
    type: 'token_count',
    info: {
      total_token_usage: { input_tokens: 12000, cached_input_tokens: 8000, output_tokens: 300, reasoning_output_tokens: 100, total_tokens: 12300 },
      last_token_usage: { input_tokens: 12000, cached_input_tokens: 8000, output_tokens: 300, reasoning_output_tokens: 100, total_tokens: 12300 },
      model_context_window: 258400,
    },
    rate_limits: null,
  }),
];
const DATA = Buffer.from(`${RECORDS.map((r) => JSON.stringify(r)).join('\n')}\n`, 'utf8');

interface Body {
  readonly [key: string]: unknown;
}
const bodies = (parsed: ReturnType<typeof parseRollout>): Body[] => parsed.events.map((e) => JSON.parse(e.envelope.text) as Body);

describe('codex: no invented model, web search ids from their end events (issue 29 item 5)', () => {
  it('a rollout that names no model gives every event the unknown model, never gpt-5', () => {
    expect(UNKNOWN_MODEL).toBe('');
    const events = bodies(parseRollout(`/logs/${NAME}`, DATA));
    // 3 web searches, 1 exec_command, 1 token count (counted above).
    expect(events).toHaveLength(5);
    for (const e of events) expect(e['model'] ?? '').toBe('');
    expect(JSON.stringify(events)).not.toContain('gpt-5');
  });

  it('an id-less web_search_call takes the call_id of its web_search_end; one without an end stays known by its line', () => {
    const searches = bodies(parseRollout(`/logs/${NAME}`, DATA)).filter((e) => e['tool'] === 'web_search');
    expect(searches.map((e) => e['call_id'])).toEqual([WS_1, WS_2, '']);
    expect(searches.map((e) => e['event_id'])).toEqual([
      stableEventId('codex', SESSION, WS_1),
      stableEventId('codex', SESSION, WS_2),
      stableEventId('codex', SESSION, 'line:9'),
    ]);
    // The pairing does not depend on where the chunks end (an end event read in a later chunk).
    expect(expectChunkInvariant(() => rolloutReading(`/logs/${NAME}`), DATA, [7, 300]).events).toEqual(parseRollout(`/logs/${NAME}`, DATA).events);
  });

  it('an end event pairs only with a call of the same action, and never takes the id of a call that carries one', () => {
    const records: Rec[] = [
      RECORDS[0] as Rec,
      env('2026-05-02T17:09:07.000Z', 'response_item', { type: 'web_search_call', status: 'completed', action: searchAction }),
      // A call with its own id, and its end: not given to the id-less call above.
      env('2026-05-02T17:09:07.500Z', 'response_item', { type: 'web_search_call', id: WS_2, status: 'completed', action: openAction }),
      env('2026-05-02T17:09:07.600Z', 'event_msg', { type: 'web_search_end', call_id: WS_2, query: openAction.url, action: openAction }),
      // An end whose action is another search's: not this call's.
      env('2026-05-02T17:09:07.700Z', 'event_msg', { type: 'web_search_end', call_id: 'ws_other', query: 'x', action: { type: 'search', query: 'x' } }),
      env('2026-05-02T17:09:07.800Z', 'event_msg', { type: 'web_search_end', call_id: WS_1, query: searchAction.query, action: searchAction }),
    ];
    const data = Buffer.from(`${records.map((r) => JSON.stringify(r)).join('\n')}\n`, 'utf8');
    const calls = bodies(parseRollout(`/logs/${NAME}`, data));
    expect(calls.map((e) => e['call_id'])).toEqual([WS_1, WS_2]);
    expect(calls.map((e) => e['event_id'])).toEqual([stableEventId('codex', SESSION, WS_1), stableEventId('codex', SESSION, WS_2)]);
    // The end that names another search (ws_other) gave no call of its own and no id.
    expect(JSON.stringify(calls)).not.toContain('ws_other');
    expectChunkInvariant(() => rolloutReading(`/logs/${NAME}`), data, [5]);
  });

  it('through the CLI: the calls are stored with model "" and flagged model_unknown, and report usage says "unknown"', () => {
    const dir = join(tmp.dir, 'sessions', '2026', '05', '02');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, NAME), DATA);
    const db = ['--db', join(tmp.dir, 'db')];
    const run = (args: string[]): { code: number | null; stdout: string; stderr: string } => {
      const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args, ...db, '--format', 'json'], { cwd: tmp.dir, encoding: 'utf8' });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const rows = (text: string): Record<string, unknown>[] => text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

    const imported = run(['import', 'codex', join(tmp.dir, 'sessions')]);
    expect(imported.code, imported.stderr).toBe(0);

    const calls = run(['query', "SELECT tool_name, call_id, model, flags FROM tool_calls FINAL ORDER BY ts"]);
    expect(calls.code, calls.stderr).toBe(0);
    expect(rows(calls.stdout)).toEqual([
      { tool_name: 'web_search', call_id: WS_1, model: '', flags: ['model_unknown'] },
      { tool_name: 'web_search', call_id: WS_2, model: '', flags: ['model_unknown'] },
      { tool_name: 'web_search', call_id: '', model: '', flags: ['model_unknown'] },
      { tool_name: 'exec_command', call_id: 'call_ZX8V1', model: '', flags: ['model_unknown'] },
    ]);
    const gpt5 = run(['query', "SELECT count() AS n FROM tool_calls FINAL WHERE model = 'gpt-5'"]);
    expect(rows(gpt5.stdout)).toEqual([{ n: 0 }]);

    const byModel = run(['report', 'usage', '--by', 'model']);
    expect(byModel.code, byModel.stderr).toBe(0);
    expect(rows(byModel.stdout)).toEqual([expect.objectContaining({ model: 'unknown', requests: 1, input_tokens: 12000, cost_usd: null, cost_flags: 'unknown_model=1' })]);
    const byDay = run(['report', 'usage']);
    expect(byDay.code, byDay.stderr).toBe(0);
    expect(rows(byDay.stdout)).toEqual([expect.objectContaining({ harness: 'codex', model: 'unknown', requests: 1 })]);
  });
});
