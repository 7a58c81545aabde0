// The pi-agent importer: parser units on inline entries, the fixture folder (a ~/.pi/agent/sessions
// layout) imported into a real embedded ClickHouse and checked against figures summed by hand in
// the fixture README and by a small reference reader here (plain JSON.parse), and the real pi
// sessions of pi-mono's own test data when the shared corpus holds them.
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { piAgentImporter } from '../../src/importers/pi-agent/index.ts';
import { parsePiFile } from '../../src/importers/pi-agent/parser.ts';
import { defaultPiPaths, listPiFiles, sessionOfFileName } from '../../src/importers/pi-agent/paths.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { CORPUS_ROOT } from '../helpers/corpus.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const FIXTURES = new URL('./fixtures-pi-agent/', import.meta.url).pathname;
const OF_FIXTURES = `startsWith(source, '${FIXTURES}')`;
const USAGE_OF_FIXTURES = `startsWith(origin, '${FIXTURES}')`;
const S1 = '8f14e45f-ceea-467e-9a3b-2c1d5e6f7a80';
const FORK = 'c9f0f895-fb98-4b91-8e4d-7a6b5c4d3e21';
const DIR = join(FIXTURES, 'sessions', '--home-ada-src-orbit--');
const MAIN_FILE = join(DIR, `2026-11-02T08-00-00-000Z_${S1}.jsonl`);
const FORK_FILE = join(DIR, `2026-11-02T09-00-00-000Z_${FORK}.jsonl`);

type Obj = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Inline entries, shaped like pi's (session-manager.ts v3; members the parser ignores left out).

const HEADER = { type: 'session', version: 3, id: 'sess-1', timestamp: '2026-05-01T10:00:00.000Z', cwd: '/w/app' };

function usage(input: number, output: number, cacheRead = 0, cacheWrite = 0, total = input + output + cacheRead + cacheWrite): Obj {
  return { input, output, cacheRead, cacheWrite, totalTokens: total, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

function user(id: string, ms: number): Obj {
  return { type: 'message', id, parentId: null, timestamp: new Date(ms).toISOString(), message: { role: 'user', content: [{ type: 'text', text: 'run the tests' }], timestamp: ms } };
}

function assistant(id: string, ms: number, content: unknown[], u: unknown = usage(3, 100, 900, 50), extra: Obj = {}, entryTs = new Date(ms + 2000).toISOString()): Obj {
  return { type: 'message', id, parentId: null, timestamp: entryTs, message: { role: 'assistant', content, api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5', usage: u, stopReason: 'toolUse', timestamp: ms, ...extra } };
}

function call(id: string, name: string, args: unknown = { command: 'npm test' }): Obj {
  return { type: 'toolCall', id, name, arguments: args };
}

function result(id: string, callId: string, ts: string, text: string, isError = false): Obj {
  return { type: 'message', id, parentId: null, timestamp: ts, message: { role: 'toolResult', toolCallId: callId, toolName: 'bash', content: [{ type: 'text', text }], details: {}, isError, timestamp: Date.parse(ts) } };
}

const T0 = Date.parse('2026-05-01T10:00:01.000Z');

function parse(records: readonly (Obj | string)[], path = '/home/u/.pi/agent/sessions/--w-app--/2026-05-01T10-00-00-000Z_sess-1.jsonl') {
  const text = records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
  const parsed = parsePiFile(path, Buffer.from(text, 'utf8'));
  return { ...parsed, malformed: parsed.malformed ?? [], text, parsedEvents: parsed.events.map((e) => JSON.parse(e.envelope.text) as Obj) };
}

describe('pi-agent paths', () => {
  it('defaults to ~/.pi/agent/sessions, or $PI_CODING_AGENT_DIR/sessions', () => {
    expect(defaultPiPaths({}, '/home/u')).toEqual(['/home/u/.pi/agent/sessions']);
    expect(defaultPiPaths({ PI_CODING_AGENT_DIR: '/data/pi' }, '/home/u')).toEqual(['/data/pi/sessions']);
    expect(defaultPiPaths({ PI_CODING_AGENT_DIR: '~/agent' }, '/home/u')).toEqual(['/home/u/agent/sessions']);
  });
  it('reads every .jsonl below the folder, and takes the session of a file without a header from its name', () => {
    expect(listPiFiles([FIXTURES])).toEqual([MAIN_FILE, FORK_FILE]);
    expect(sessionOfFileName('/x/2026-11-02T08-00-00-000Z_8f14e45f-ceea.jsonl')).toBe('8f14e45f-ceea');
    expect(sessionOfFileName('/x/plain.jsonl')).toBe('plain');
  });
});

describe('pi-agent parser', () => {
  it('reads usage as pi logs it: input without the cache buckets, both caches apart, output with reasoning inside', () => {
    const p = parse([HEADER, user('u1', T0), assistant('a1', T0 + 100, [{ type: 'text', text: 'ok' }], usage(3, 100, 900, 50), { stopReason: 'stop' })]);
    expect(p.malformed).toEqual([]);
    expect(p.parsedEvents).toEqual([
      {
        schema: 'toolcanon.event/v1',
        type: 'usage',
        event_id: expect.any(String),
        ts: new Date(T0 + 2100).toISOString(),
        harness: 'pi_agent',
        session_id: 'sess-1',
        turn_id: String(T0),
        model: 'claude-sonnet-4-5',
        request_id: String(T0 + 100),
        input_tokens: 3,
        output_tokens: 100,
        cache_read_tokens: 900,
        cache_write_tokens: 50,
      },
    ]);
  });

  it('takes the cache out of input when the record keeps it inside (the Google paths: total = input + output)', () => {
    const [g] = parse([HEADER, assistant('a1', T0, [], usage(12_500, 310, 8000, 0, 12_810))]).parsedEvents;
    expect(g).toMatchObject({ input_tokens: 4500, cache_read_tokens: 8000, output_tokens: 310 });
    // The same figures with the total of the other providers (input + output + cache) stay as logged.
    const [o] = parse([HEADER, assistant('a1', T0, [], usage(12_500, 310, 8000, 0))]).parsedEvents;
    expect(o).toMatchObject({ input_tokens: 12_500, cache_read_tokens: 8000 });
  });

  it('joins each toolCall to its toolResult: status, output, error, images, duration from the two entries', () => {
    const a = assistant('a1', T0, [call('c1', 'bash'), call('c2', 'read', { path: 'a.ts' })]);
    const img = result('r2', 'c2', '2026-05-01T10:00:03.250Z', 'Read image file [image/png]');
    ((img['message'] as Obj)['content'] as unknown[]).push({ type: 'image', data: 'AA==', mimeType: 'image/png' });
    const p = parse([HEADER, user('u1', T0), a, result('r1', 'c1', '2026-05-01T10:00:06.500Z', 'FAIL a.test.ts\n1 failed\n\nCommand exited with code 1', true), img]);
    expect(p.malformed).toEqual([]);
    const calls = p.parsedEvents.filter((e) => e['type'] === 'tool_call');
    expect(calls.map((e) => [e['call_id'], e['tool'], e['status'], e['error'], e['duration_ms'], e['images'], e['turn_id']])).toEqual([
      ['c1', 'bash', 'error', 'FAIL a.test.ts', 3500, undefined, String(T0)],
      ['c2', 'read', 'ok', undefined, 250, 1, String(T0)],
    ]);
    expect(calls[0]?.['output']).toBe('FAIL a.test.ts\n1 failed\n\nCommand exited with code 1');
  });

  it('keeps the raw arguments byte for byte (key order, big integers, escapes)', () => {
    const raw = `{"type":"message","id":"a1","parentId":null,"timestamp":"2026-05-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"limit":18446744073709551617,"path":"caf\\u00e9.ts"}}],"model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":1}}`;
    const p = parse([HEADER, raw, result('r1', 'c1', '2026-05-01T10:00:03.000Z', 'x')]);
    const e = p.events.find((x) => x.envelope.text.includes('"tool_call"'));
    expect(e?.envelope.text.endsWith(',"input":{"limit":18446744073709551617,"path":"caf\\u00e9.ts"}}')).toBe(true);
  });

  it('makes the calls of a response that stopped with error or aborted errors at once (they never ran), and a call without result pending', () => {
    const p = parse([
      HEADER,
      assistant('a1', T0, [call('c1', 'write', { path: 'x', content: 'y' })], usage(0, 0), { stopReason: 'aborted', errorMessage: 'Request was aborted' }),
      assistant('a2', T0 + 10, [call('c2', 'bash')], usage(0, 0), { stopReason: 'error', errorMessage: 'overloaded_error\nretry later' }),
      assistant('a3', T0 + 20, [], usage(0, 0), { stopReason: 'aborted' }),
      assistant('a4', T0 + 30, [call('c3', 'bash')]),
    ]);
    expect(p.parsedEvents.filter((e) => e['type'] === 'tool_call').map((e) => [e['call_id'], e['status'], e['error']])).toEqual([
      ['c1', 'error', 'aborted: Request was aborted'],
      ['c2', 'error', 'error: overloaded_error'],
      ['c3', 'pending', undefined],
    ]);
    // Zero usage is no usage event; counted only when the response has no call either.
    expect(p.parsedEvents.filter((e) => e['type'] === 'usage')).toHaveLength(1);
    expect(p.skipped).toEqual({ usage_zero: 1 });
  });

  it('gives a v1 file and its migrated v3 rewrite the same events (ids never use entry ids)', () => {
    const v1 = [
      { type: 'session', id: 'sess-1', timestamp: '2026-05-01T10:00:00.000Z', cwd: '/w/app' },
      { ...user('x', T0), id: undefined, parentId: undefined },
      { ...assistant('x', T0 + 100, [call('c1', 'bash')]), id: undefined, parentId: undefined },
      { ...result('x', 'c1', '2026-05-01T10:00:04.000Z', 'ok'), id: undefined, parentId: undefined },
    ];
    const v3 = v1.map((e, i) => (i === 0 ? { ...e, version: 3 } : { ...e, id: `e000000${i}`, parentId: i > 1 ? `e000000${i - 1}` : null }));
    const a = parse(v1).events.map((e) => e.envelope.text);
    const b = parse(v3).events.map((e) => e.envelope.text);
    expect(a).toHaveLength(2);
    expect(b).toEqual(a);
  });

  it('skips the copies a fork made (entries older than a header that names a parentSession), and gives a repeated request time its own id', () => {
    const copy = assistant('a1', T0, [call('c1', 'bash')]);
    const fork = { ...HEADER, id: 'fork-1', timestamp: '2026-05-01T11:00:00.000Z', parentSession: '/p/parent.jsonl' };
    const later = Date.parse('2026-05-01T11:00:05.000Z');
    const p = parse([fork, user('u0', T0), copy, result('r1', 'c1', '2026-05-01T10:00:04.000Z', 'ok'), user('u1', later), assistant('a2', later + 5, []), assistant('a3', later + 5, [])]);
    expect(p.skipped).toEqual({ forked_copy: 3 });
    const ids = p.parsedEvents.map((e) => [e['session_id'], e['request_id'], e['turn_id']]);
    expect(ids).toEqual([
      ['fork-1', String(later + 5), String(later)],
      ['fork-1', `${later + 5}#2`, String(later)],
    ]);
  });

  it('makes each unreadable record a malformed record with its line, and counts what it skips on purpose', () => {
    const p = parse([
      HEADER,
      '{"type":"message","message":',
      { type: 7 },
      { type: 'message', message: 'hi' },
      assistant('a1', T0, [], { input: -1 }),
      assistant('a2', T0, [{ type: 'toolCall', name: 'bash' }, { type: 'toolCall', id: 'c9', name: 'bash', arguments: 'ls' }], usage(1, 1)),
      { type: 'message', timestamp: 'soon', message: { role: 'assistant', content: [call('c5', 'bash')], model: 'm', usage: usage(1, 1) } },
      { type: 'message', timestamp: '2026-05-01T10:00:09.000Z', message: { role: 'toolResult', content: [] } },
      result('r7', 'nope', '2026-05-01T10:00:09.000Z', 'x'),
      { type: 'message', timestamp: '2026-05-01T10:00:09.000Z', message: { role: 'bashExecution', command: 'ls' } },
      { type: 'label', id: 'l1', targetId: 'a1', label: 'x' },
      { type: 'future_entry' },
    ]);
    expect(p.malformed.map((m) => [m.line, m.problem])).toEqual([
      [2, 'invalid_json'],
      [3, 'malformed:record'],
      [4, 'malformed:message'],
      [5, 'malformed:usage'],
      // Two bad blocks of one line: one malformed record (the line is kept once).
      [6, 'malformed:tool_call'],
      [7, 'bad_timestamp'],
      [8, 'malformed:tool_result'],
    ]);
    expect(p.skipped).toEqual({ tool_result_without_call: 1, 'message:bashExecution': 1, label: 1, 'unknown_type:future_entry': 1 });
    // The usage of line 6 is still read.
    expect(p.parsedEvents.map((e) => e['type'])).toEqual(['usage']);
  });
});

// ---------------------------------------------------------------------------------------------
// The fixture folder into embedded ClickHouse, against a reference reader written here.

interface Expected {
  responses: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  calls: Map<string, { tool: string; status: string; args: unknown }>;
}

/** A few lines of plain JSON reading: pi's rules as the README states them, not the importer's code. */
function expectedFigures(files: readonly string[]): Expected {
  const out: Expected = { responses: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, calls: new Map() };
  for (const file of files) {
    const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Obj);
    const header = lines[0] as Obj;
    const forkedAt = typeof header['parentSession'] === 'string' ? Date.parse(header['timestamp'] as string) : -Infinity;
    const results = new Map<string, boolean>();
    for (const e of lines) {
      const m = e['message'] as Obj | undefined;
      if (m?.['role'] === 'toolResult') results.set(m['toolCallId'] as string, m['isError'] === true);
    }
    for (const e of lines) {
      if (e['type'] !== 'message' || Date.parse(e['timestamp'] as string) < forkedAt) continue;
      const m = e['message'] as Obj;
      if (m['role'] !== 'assistant') continue;
      const u = m['usage'] as Record<string, number>;
      const [i, o, r, w] = [u['input'] ?? 0, u['output'] ?? 0, u['cacheRead'] ?? 0, u['cacheWrite'] ?? 0];
      if (i + o + r + w > 0) {
        out.responses++;
        out.input += r > 0 && u['totalTokens'] === i + o ? i - r : i;
        out.output += o;
        out.cacheRead += r;
        out.cacheWrite += w;
      }
      for (const b of m['content'] as Obj[]) {
        if (b['type'] !== 'toolCall') continue;
        const id = b['id'] as string;
        const notRun = m['stopReason'] === 'error' || m['stopReason'] === 'aborted';
        const status = results.has(id) ? (results.get(id) ? 'error' : 'ok') : notRun ? 'error' : 'pending';
        out.calls.set(id, { tool: b['name'] as string, status, args: b['arguments'] });
      }
    }
  }
  return out;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

describe('pi-agent import of the fixture folder into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let first: ImportSummary;
  const files = walk(FIXTURES).filter((p) => p.endsWith('.jsonl')).sort();
  const expected = expectedFigures(files);
  const tmp = makeTempDir('pi-import');

  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('pi-agent'));
    first = await runImport(piAgentImporter, [FIXTURES], sink);
  });
  afterAll(async () => {
    await cleanup?.();
    tmp.cleanup();
  });

  async function usageTotals(): Promise<Record<string, number>> {
    const [row] = await sink.queryRows<Record<string, string>>(
      `SELECT count() AS responses, sum(input_tokens) AS input, sum(output_tokens) AS output, sum(cache_read_tokens) AS cacheRead, sum(cache_write_tokens) AS cacheWrite
       FROM token_usage FINAL WHERE source = 'observed' AND harness = 'pi_agent' AND ${USAGE_OF_FIXTURES}`,
    );
    return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
  }

  it('the reference reader gives the figures summed by hand in the fixture README', () => {
    expect(files).toEqual([MAIN_FILE, FORK_FILE]);
    const { calls, ...sums } = expected;
    expect(sums).toEqual({ responses: 7, input: 6317, output: 1324, cacheRead: 65_050, cacheWrite: 11_010 });
    const byTool: Record<string, number> = {};
    for (const c of calls.values()) byTool[c.tool] = (byTool[c.tool] ?? 0) + 1;
    expect(byTool).toEqual({ read: 3, bash: 2, write: 2, edit: 1, grep: 1, ls: 1, find: 1 });
  });

  it('stores one usage row per response with the token sums computed from the files, and the context the convention gives', async () => {
    const { calls: _calls, ...sums } = expected;
    expect(await usageTotals()).toEqual(sums);
    const rows = await sink.queryRows<{ session_id: string; input: string; output: string }>(
      `SELECT session_id, sum(input_tokens) AS input, sum(output_tokens) AS output FROM token_usage FINAL WHERE source = 'observed' AND ${USAGE_OF_FIXTURES} GROUP BY session_id ORDER BY session_id`,
    );
    expect(rows.map((r) => [r.session_id, Number(r.input), Number(r.output)])).toEqual([
      [S1, 6312, 1228],
      [FORK, 5, 96],
    ]);
    // Input without the cache (USAGE_CONVENTIONS.pi_agent): context = input + cache read + cache write + output.
    const [g] = await sink.queryRows<{ context_tokens: string }>(`SELECT context_tokens FROM token_usage FINAL WHERE source = 'observed' AND model = 'gemini-2.5-pro' AND ${USAGE_OF_FIXTURES}`);
    expect(g).toEqual({ context_tokens: String(4500 + 8000 + 310) });
  });

  it('stores every tool call once, with the status, kind and projection the files give', async () => {
    const statuses = await sink.queryRows<{ status: string; n: string }>(`SELECT status, count() AS n FROM tool_calls FINAL WHERE harness = 'pi_agent' AND ${OF_FIXTURES} GROUP BY status ORDER BY status`);
    const want: Record<string, number> = {};
    for (const c of expected.calls.values()) want[c.status] = (want[c.status] ?? 0) + 1;
    expect(Object.fromEntries(statuses.map((r) => [r.status, Number(r.n)]))).toEqual(want);
    expect(want).toEqual({ ok: 8, error: 2, pending: 1 });
    const rows = await sink.queryRows<Record<string, string | null>>(
      `SELECT call_id, namespace, tool_name, kind, path, \`offset\`, \`limit\`, command, directory, pattern, arrayStringConcat(flags, ',') AS flags, session_id, error, duration_ms, images FROM tool_calls FINAL WHERE ${OF_FIXTURES} ORDER BY call_id`,
    );
    const byCall = Object.fromEntries(rows.map((r) => [r['call_id'], r]));
    expect(byCall['toolu_01A']).toMatchObject({ namespace: 'pi_agent', kind: 'read', path: 'test/orbit.test.ts', offset: '1', limit: '80', duration_ms: '40' });
    expect(byCall['toolu_01B']).toMatchObject({ kind: 'execute', command: 'npm test -- orbit', error: 'FAIL test/orbit.test.ts', duration_ms: '3500' });
    expect(byCall['toolu_01D']).toMatchObject({ kind: 'search', pattern: 'orbit\\(', path: 'src', limit: '20' });
    expect(byCall['call_9x|fc_1']).toMatchObject({ kind: 'read', directory: 'docs', limit: '50' });
    expect(byCall['call_9y|fc_2']).toMatchObject({ images: 1 });
    expect(byCall['toolu_01E']).toMatchObject({ tool_name: 'write', error: 'aborted: Request was aborted' });
    expect(byCall['toolu_02A']).toMatchObject({ session_id: FORK, path: 'docs/orbit.md' });
    expect(rows.filter((r) => r['flags'] !== '').map((r) => r['call_id'])).toEqual([]);
  });

  it('keeps each raw input byte for byte as the file logged it', async () => {
    const rows = await sink.queryRows<{ call_id: string; raw_input: string; source: string }>(`SELECT call_id, raw_input, source FROM tool_calls FINAL WHERE ${OF_FIXTURES}`);
    expect(rows).toHaveLength(expected.calls.size);
    for (const r of rows) {
      const [file] = r.source.split(/:(?=\d+$)/);
      expect(readFileSync(file ?? '', 'utf8'), r.call_id).toContain(`"arguments":${r.raw_input}`);
      expect(JSON.parse(r.raw_input), r.call_id).toEqual(expected.calls.get(r.call_id)?.args);
    }
  });

  it('accounts for every event and record: no dead letter, the skipped records listed in the README', async () => {
    const c = first.counts;
    expect(first.filesSeen).toBe(2);
    expect(first.eventsEmitted).toBe(expected.responses + expected.calls.size);
    expect(c.rowsWritten + c.deadLetters).toBe(c.eventsRead);
    expect(c.deadLetters).toBe(0);
    expect(first.malformedRecords).toBe(0);
    expect(c.toolCallRows).toBe(expected.calls.size);
    expect(c.usageRows).toBe(expected.responses);
    expect(first.skippedRecords).toEqual({ model_change: 1, thinking_level_change: 1, 'message:bashExecution': 1, compaction: 1, usage_zero: 1, custom: 1, session_info: 1, forked_copy: 14 });
    const lines = files.reduce((n, f) => n + readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '').length, 0);
    expect(first.recordsRead).toBe(lines);
  });

  it('changes no count when the same folder is imported again', async () => {
    const again = await runImport(piAgentImporter, [FIXTURES], sink);
    expect(again.filesUnchanged).toBe(2);
    expect(again.eventsEmitted).toBe(0);
    expect((await usageTotals())['responses']).toBe(expected.responses);
  });

  it('imports a grown file incrementally: a pending call is completed by its result, nothing counted twice', async () => {
    const dir = join(tmp.dir, 'grow', 'sessions', '--w--');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, '2026-05-01T10-00-00-000Z_grow-1.jsonl');
    writeFileSync(file, [{ ...HEADER, id: 'grow-1' }, user('u1', T0), assistant('a1', T0 + 100, [call('g1', 'bash')])].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const a = await runImport(piAgentImporter, [file], sink);
    expect(a.eventsEmitted).toBe(2);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE call_id = 'g1' AND status = 'pending'")).toBe(1);
    appendFileSync(file, JSON.stringify(result('r1', 'g1', '2026-05-01T10:00:05.000Z', 'Command exited with code 2', true)) + '\n');
    const b = await runImport(piAgentImporter, [file], sink);
    expect(b.eventsEmitted).toBe(1);
    expect(b.eventsAlreadyImported).toBe(1);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE call_id = 'g1'")).toBe(1);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE call_id = 'g1' AND status = 'error'")).toBe(1);
    expect(await countOf(sink, "SELECT count() AS n FROM token_usage FINAL WHERE source = 'observed' AND session_id = 'grow-1'")).toBe(1);
  });

  it('writes a damaged line as one dead letter with its bytes and file:line, beside the records that still read', async () => {
    const dir = join(tmp.dir, 'damaged', 'sessions', '--w--');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, '2026-05-01T10-00-00-000Z_dmg-1.jsonl');
    // A session of its own: under the fork's id its rows would replace the fixture's (same ids).
    const good = readFileSync(FORK_FILE, 'utf8').replaceAll(FORK, 'dmg-1').split('\n').filter((l) => l !== '');
    const junk = '{"type":"message","message":{"role":"assistant","usage":{"input":';
    writeFileSync(file, [...good.slice(0, 16), junk, ...good.slice(16)].join('\n') + '\n');
    const s = await runImport(piAgentImporter, [file], sink);
    expect(s.malformedRecords).toBe(1);
    const [dl] = await sink.queryRows<{ reason: string; raw: string }>(`SELECT reason, raw FROM dead_letters FINAL WHERE source = '${file}:17'`);
    expect(dl).toMatchObject({ reason: 'import_malformed', raw: junk });
    expect(s.eventsEmitted).toBe(3);
    expect(s.skippedRecords).toEqual({ forked_copy: 14 });
  });
});

// ---------------------------------------------------------------------------------------------
// Real sessions: pi-mono's own test data (badlogic/pi-mono @ 83378aad,
// packages/coding-agent/test/fixtures/), read from the shared corpus when it holds them.

const REAL = resolve(CORPUS_ROOT, 'samples', 'pi_agent');
const REAL_FILES = ['large-session.jsonl', 'before-compaction.jsonl'];
const haveReal = REAL_FILES.every((f) => existsSync(join(REAL, f)));
if (!haveReal) {
  const bar = '!'.repeat(78);
  console.warn(`\n${bar}\n!! SKIPPING the pi-agent real-session figures: ${REAL} does not hold ${REAL_FILES.join(' and ')}.\n!! Their source and figures: test/importers/fixtures-pi-agent/README.md.\n${bar}\n`);
}

describe.skipIf(!haveReal)('pi-agent on real pi sessions (pi-mono test fixtures), against the figures computed with figures.py', () => {
  const figures = (name: string) => {
    const p = parsePiFile(join(REAL, name), readFileSync(join(REAL, name)));
    const events = p.events.map((e) => JSON.parse(e.envelope.text) as Obj);
    const u = events.filter((e) => e['type'] === 'usage');
    const sum = (k: string): number => u.reduce((n, e) => n + Number(e[k] ?? 0), 0);
    const calls = events.filter((e) => e['type'] === 'tool_call');
    const count = (key: string): Record<string, number> => {
      const out: Record<string, number> = {};
      for (const c of calls) out[String(c[key])] = (out[String(c[key])] ?? 0) + 1;
      return out;
    };
    return { malformed: (p.malformed ?? []).length, sessions: [...new Set(events.map((e) => e['session_id']))], usage: [u.length, sum('input_tokens'), sum('output_tokens'), sum('cache_read_tokens'), sum('cache_write_tokens')], tools: count('tool'), status: count('status'), skipped: p.skipped };
  };

  it('large-session.jsonl', () => {
    expect(figures('large-session.jsonl')).toEqual({
      malformed: 0,
      sessions: ['d703a1a9-1b7b-4fb1-b512-c9738b1fe617'],
      usage: [439, 1049, 83_156, 43_229_469, 4_296_232],
      tools: { bash: 192, edit: 146, read: 50, write: 3 },
      status: { ok: 354, error: 19 + 18 },
      skipped: { usage_zero: 14, thinking_level_change: 103, model_change: 1 },
    });
  });

  it('before-compaction.jsonl', () => {
    expect(figures('before-compaction.jsonl')).toEqual({
      malformed: 0,
      sessions: ['ffae836b-9420-4060-ac13-7745215f90ff'],
      usage: [471, 3689, 187_895, 54_693_675, 1_685_320],
      tools: { bash: 206, edit: 125, read: 107, write: 16 },
      status: { ok: 436, error: 12 + 5, pending: 1 },
      skipped: { usage_zero: 13, thinking_level_change: 5, model_change: 5, compaction: 2, 'message:bashExecution': 3 },
    });
  });
});
