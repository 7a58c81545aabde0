// SPEC §6 as tests: the search budget of 3 per agent turn, not-in-active-set refusals and the
// recovery they name, which search listed which tool. Observed through the real decoder, derived
// by event time (input order never matters).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { listSearchMetaTools } from '../../src/catalogue/index.ts';
import { decodeEvent } from '../../src/decode/event.ts';
import { deriveDiscovery, namesInResult, SEARCH_BUDGET_PER_TURN } from '../../src/discovery/discovery.ts';
import { discoveryEventRowSchema, type DiscoveryEventRow, type DiscoveryObservation } from '../../src/model/mcp.ts';

const T0 = Date.parse('2026-12-12T10:00:00.000Z');
let n = 0;

function observe(tool: string, input: unknown, extra: Record<string, unknown> = {}, turn = 't1', harness = 'grok_build_concise'): DiscoveryObservation | undefined {
  n++;
  const line = JSON.stringify({
    schema: 'toolcanon.event/v1', type: 'tool_call', ts: new Date(T0 + n * 1000).toISOString(), harness, session_id: 's', turn_id: turn,
    call_id: `c${n}`, model: 'grok-4', tool, input, status: 'ok', event_id: `e${String(n).padStart(4, '0')}`, ...extra,
  });
  const o = decodeEvent(Buffer.from(line), 'f:1', '2026-12-12 10:00:00.000');
  if (o.kind !== 'row') throw new Error(JSON.stringify(o));
  return o.discovery;
}

const need = (o: DiscoveryObservation | undefined): DiscoveryObservation => {
  if (!o) throw new Error('expected a discovery observation');
  return o;
};
const search = (query: string, output: string, turn = 't1', extra: Record<string, unknown> = {}) => need(observe('search_tool', { query }, { output, ...extra }, turn));
const use = (tool: string, turn = 't1', extra: Record<string, unknown> = {}) => need(observe('use_tool', { tool_name: tool, tool_input: {} }, extra, turn));
const listing = (server: string, ...tools: string[]) => JSON.stringify({ results: [{ server, tools: tools.map((name) => ({ name, description: `${name} (${server}__decoy)`, input_schema: { type: 'object' } })) }] });
const derive = (obs: readonly DiscoveryObservation[]): DiscoveryEventRow[] => deriveDiscovery(obs, '2026-12-12 11:00:00.000');
const BUDGET = '{"error":"search-budget-exhausted","budgetCap":3}';

describe('the search budget: 3 per agent turn', () => {
  it('makes the 4th search of a turn a budget refusal, flagged when the harness ran it anyway', () => {
    const rows = derive([search('a', listing('x', 'a')), search('b', '{"results":[]}'), search('c', listing('x', 'c')), search('d', listing('x', 'd'))]);
    expect(rows.map((r) => [r.turn_search_seq, r.budget_refusal, r.flags])).toEqual([
      [1, false, []], [2, false, []], [3, false, []], [4, true, ['search_budget_exceeded']],
    ]);
    expect(SEARCH_BUDGET_PER_TURN).toBe(3);
  });

  it('does not flag a 4th search the harness refused with search-budget-exhausted, in its output or its error', () => {
    const viaError = derive([search('a', ''), search('b', ''), search('c', ''), search('d', '', 't1', { status: 'error', error: BUDGET })]);
    expect(viaError.at(-1)).toMatchObject({ turn_search_seq: 4, budget_refusal: true, reported_budget_exhausted: true, flags: [] });
    const viaOutput = derive([search('a', ''), search('b', ''), search('c', ''), search('d', BUDGET)]);
    expect(viaOutput.at(-1)).toMatchObject({ budget_refusal: true, reported_budget_exhausted: true, result_tools: [] });
  });

  it('counts per turn: three searches in each of two turns are all within budget', () => {
    const rows = derive([search('a', ''), search('b', ''), search('c', ''), search('d', '', 't2'), search('e', '', 't2'), search('f', '', 't2')]);
    expect(rows.filter((r) => r.budget_refusal)).toEqual([]);
  });
});

describe('not in active set: the recovery the error names', () => {
  const refusal = (tool: string, turn = 't1') =>
    use(`exports__${tool}`, turn, { status: 'error', error: `Tool '${tool}' not in active set. Call searchTools(query='${tool}') to discover it, or use one of: read_file, bash` });

  it('counts a refusal followed by the named search and a successful call as recovered', () => {
    const rows = derive([refusal('startExport'), search('startExport', listing('exports', 'startExport')), use('exports__startExport')]);
    expect(rows[0]).toMatchObject({ discovery_kind: 'refusal', refused_tool: 'startExport', recovery_query: 'startExport', recovery_searched: true, recovered: true });
    expect(rows[2]).toMatchObject({ discovery_kind: 'call', called_tool: 'exports__startExport', after_search: true });
  });

  it('is not recovered without the search, with a failing call, or when the recovery happens in another turn', () => {
    expect(derive([refusal('archiveRun'), use('exports__archiveRun')])[0]).toMatchObject({ recovery_searched: false, recovered: false });
    expect(derive([refusal('archiveRun'), search('archiveRun', listing('exports', 'archiveRun')), use('exports__archiveRun', 't1', { status: 'error', error: 'boom' })])[0])
      .toMatchObject({ recovery_searched: true, recovered: false });
    expect(derive([refusal('archiveRun'), search('archiveRun', listing('exports', 'archiveRun'), 't2'), use('exports__archiveRun', 't2')])[0]).toMatchObject({ recovery_searched: false, recovered: false });
  });

  it('accepts a search that lists the tool under another query as the recovery search', () => {
    expect(derive([refusal('startExport'), search('export a table', listing('exports', 'startExport')), use('exports__startExport')])[0]).toMatchObject({ recovered: true });
  });
});

describe('calls reached through search or directly', () => {
  it('marks a call after_search only when an earlier search of the session listed that tool', () => {
    const rows = derive([use('time__get_current_time'), search('time', listing('time', 'convert_time')), use('time__convert_time', 't2'), use('time__get_current_time', 't2')]);
    expect(rows.filter((r) => r.discovery_kind === 'call').map((r) => [r.called_tool, r.after_search])).toEqual([
      ['time__get_current_time', false], ['time__convert_time', true], ['time__get_current_time', false],
    ]);
  });

  it('derives the same rows whatever order the observations arrive in, and ignores duplicates (property)', () => {
    const obs = [search('a', listing('s', 'a')), use('s__a'), search('b', ''), search('c', ''), search('d', ''), use('s__b', 't1', { status: 'error', error: "Tool 'b' not in active set. Call searchTools(query='b')" }), search('b', listing('s', 'b')), use('s__b')];
    const expected = derive(obs);
    fc.assert(fc.property(fc.shuffledSubarray([...obs, ...obs.slice(0, 3)], { minLength: obs.length + 3, maxLength: obs.length + 3 }), (shuffled) => {
      expect(derive(shuffled)).toEqual(expected);
    }), { seed: 6, numRuns: 50 });
    for (const r of expected) expect(discoveryEventRowSchema.safeParse(r).success, JSON.stringify(r)).toBe(true);
  });

  it('is silent about calls that are not discovery: a built-in tool is no discovery event', () => {
    expect(observe('bash', { command: 'ls' })).toBeUndefined();
  });
});

describe('the search meta-tool of each family, and what its result named', () => {
  it('declares search_tool, Codex search_tool_bm25 and Claude Code ToolSearch in the catalogue rows', () => {
    expect(listSearchMetaTools()).toEqual(['codex/search_tool_bm25', 'claude_code/ToolSearch', 'mcp/search_tool']);
    expect(need(observe('ToolSearch', { query: 'notion', max_results: 3 }, {}, 't1', 'claude_code')).discovery_kind).toBe('search');
    expect(need(observe('search_tool_bm25', '{"query":"calendar"}', {}, 't1', 'codex')).query).toBe('calendar');
    expect(need(observe('search_tool', { query: 'x' }, {}, 't1', 'codex')).discovery_kind).toBe('search');
  });

  it.each([
    ['results grouped by server (bare names joined, server names and descriptions ignored)', listing('github', 'create_issue', 'search_issues'), ['github__create_issue', 'github__search_issues']],
    ['Claude Code tool_reference blocks', '[{"type":"tool_reference","tool_name":"mcp__notion__create_page"},{"type":"tool_reference","tool_name":"mcp__notion__search"}]', ['notion__create_page', 'notion__search']],
    ['Claude Code transcript text (one name per line)', 'mcp__notion__create_page\nmcp__notion__search', ['notion__create_page', 'notion__search']],
    ['Codex tools list', '{"tools":[{"name":"mcp__codex_apps__calendar_create_event","server":"codex_apps"},{"server_name":"codex_apps","tool_name":"calendar_list_events"}]}', ['codex_apps__calendar_create_event', 'codex_apps__calendar_list_events']],
    ['text listing', 'serena (2 tools)\n  serena__find_symbol: Finds a symbol.\n  serena__find_file: Finds a file.', ['serena__find_symbol', 'serena__find_file']],
    ['MCP content array holding JSON text', JSON.stringify({ content: [{ type: 'text', text: listing('k8s', 'get_pods') }] }), ['k8s__get_pods']],
    ['names with two separators are not tools', 'a__b__c and ok__tool', ['ok__tool']],
    ['an empty result', '{"results":[]}', []],
  ])('reads %s', (_name, output, expected) => {
    expect(namesInResult(output)).toEqual(expected);
  });
});
