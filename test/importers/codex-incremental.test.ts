// Incremental Codex imports into a real embedded ClickHouse: a rollout that is still being
// written (a truncated last line, a call without its output yet) imported, then grown and
// imported again (a corpus rollout: skipped loudly without the corpus, a failure under CI=true);
// and arguments that are not JSON, kept verbatim and flagged (runs without the corpus).
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexImporter } from '../../src/importers/codex/index.ts';
import { parseRollout } from '../../src/importers/codex/parser.ts';
import { listRolloutFiles } from '../../src/importers/codex/paths.ts';
import { runImport } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { countOf, openTempSink } from '../helpers/db.ts';

const CORPUS = corpusOrSkip('codex', 'the incremental Codex import test on a corpus rollout (test/importers/codex-incremental.test.ts)');
/** A real 0.4x rollout: token counts, shell, sequential-thinking and serena calls. */
const SOURCE = CORPUS ? (listRolloutFiles([CORPUS]).find((f) => f.includes('a264ea88')) as string) : null;
const SESSION = 'a264ea88-f8ea-4961-9541-aeb2be7518dd';

interface Raw {
  readonly type?: string;
  readonly payload?: { readonly type?: string; readonly call_id?: string; readonly info?: { readonly total_token_usage?: Record<string, number> } | null };
}

/** The reference rule, written out independently of the parser: sum the deltas of the totals. */
function referenceUsage(lines: readonly string[]): { requests: number; input: number; cached: number; output: number; reasoning: number } {
  const keys = ['input_tokens', 'cached_input_tokens', 'output_tokens', 'reasoning_output_tokens'] as const;
  const sums = { requests: 0, input: 0, cached: 0, output: 0, reasoning: 0 };
  let prev: Record<string, number> | undefined;
  for (const line of lines) {
    const o = JSON.parse(line) as Raw;
    const total = o.type === 'event_msg' && o.payload?.type === 'token_count' ? o.payload.info?.total_token_usage : undefined;
    if (total === undefined) continue;
    const p = prev;
    prev = total;
    if (p && keys.every((k) => total[k] === p[k])) continue;
    const base = p && keys.every((k) => (total[k] ?? 0) >= (p[k] ?? 0)) ? p : undefined;
    const d = (k: (typeof keys)[number]): number => (total[k] ?? 0) - (base?.[k] ?? 0);
    sums.requests++;
    sums.input += d('input_tokens');
    sums.cached += d('cached_input_tokens');
    sums.output += d('output_tokens');
    sums.reasoning += d('reasoning_output_tokens');
  }
  return sums;
}

function functionCalls(lines: readonly string[]): string[] {
  return lines.map((l) => JSON.parse(l) as Raw).filter((o) => o.payload?.type === 'function_call').map((o) => o.payload?.call_id ?? '');
}

async function sessionUsage(sink: ClickHouseSink, session: string): Promise<{ requests: number; input: number; cached: number; output: number; reasoning: number }> {
  const [r] = await sink.queryRows<{ requests: string; input: string; cached: string; output: string; reasoning: string }>({
    query: `SELECT count() AS requests, sum(input_tokens) AS input, sum(cache_read_tokens) AS cached, sum(output_tokens) AS output, sum(reasoning_tokens) AS reasoning
            FROM token_usage FINAL WHERE source = 'observed' AND session_id = {s:String}`,
    query_params: { s: session },
  });
  return { requests: Number(r?.requests), input: Number(r?.input), cached: Number(r?.cached), output: Number(r?.output), reasoning: Number(r?.reasoning) };
}

// One embedded ClickHouse for the file (chdb: one data directory per process).
let sink: ClickHouseSink;
let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ sink, dir, cleanup } = await openTempSink('codex-incremental'));
});
afterAll(async () => cleanup?.());

describe.skipIf(SOURCE === null)('incremental codex imports of a corpus rollout', () => {
  // Read in beforeAll: the suite body also runs (to list its tests) when it is skipped.
  let full: Buffer;
  let lines: string[];
  let callIndex: number;
  let head: string[];
  let headBytes: number;
  let outputLine: string;
  let pendingCallId: string;
  let rollout: string;

  beforeAll(() => {
    const source = SOURCE ?? '';
    full = readFileSync(source);
    lines = full.toString('utf8').split('\n').filter((l) => l.trim() !== '');
    // Cut inside the output of the first shell call that follows two token counts: the call is
    // complete, its output is half written.
    callIndex = lines.findIndex((l, i) => l.includes('"name":"shell"') && lines.slice(0, i).filter((x) => x.includes('"token_count"')).length >= 2);
    head = lines.slice(0, callIndex + 1);
    headBytes = Buffer.byteLength(head.join('\n') + '\n', 'utf8');
    outputLine = lines[callIndex + 1] as string;
    pendingCallId = (JSON.parse(lines[callIndex] as string) as Raw).payload?.call_id as string;
    mkdirSync(join(dir, 'sessions'));
    rollout = join(dir, 'sessions', source.split('/').pop() as string);
    writeFileSync(rollout, Buffer.concat([full.subarray(0, headBytes), Buffer.from(outputLine.slice(0, Math.floor(outputLine.length / 2)), 'utf8')]));
  });

  it('chose a cut with usage and calls before it, and more after', () => {
    expect(callIndex).toBeGreaterThan(10);
    expect(outputLine).toContain(pendingCallId);
    expect(functionCalls(head).length).toBeGreaterThanOrEqual(3);
    expect(referenceUsage(head).requests).toBeGreaterThanOrEqual(2);
    expect(referenceUsage(lines).requests).toBeGreaterThan(referenceUsage(head).requests);
  });

  // One ordered scenario: each step imports the file as the step before left it (so the steps
  // cannot run apart or in another order).
  it('step by step: what is complete, then what the grown file adds, then nothing', async () => {
    // 1. Imports what is complete, leaves the truncated last line for later, keeps the open call pending.
    const s = await runImport(codexImporter, [join(dir, 'sessions')], sink);
    expect(s.recordsRead).toBe(head.length);
    expect(s.eventsEmitted).toBe(functionCalls(head).length + referenceUsage(head).requests);
    expect(s.counts.rowsWritten + s.counts.deadLetters).toBe(s.eventsEmitted);
    const firstEmitted = s.eventsEmitted;
    const states = await sink.queryRows<{ complete_bytes: string }>({ query: "SELECT complete_bytes FROM import_files FINAL WHERE importer = 'codex' AND path = {p:String}", query_params: { p: rollout } });
    expect(states).toHaveLength(1);
    const [state] = states;
    expect(Number(state?.complete_bytes)).toBe(headBytes);
    expect(await sessionUsage(sink, SESSION)).toEqual(referenceUsage(head));
    const statuses = await sink.queryRows<{ call_id: string; status: string }>(`SELECT call_id, status FROM tool_calls FINAL WHERE session_id = '${SESSION}' ORDER BY ts, call_id`);
    expect(statuses).toHaveLength(functionCalls(head).length);
    expect(statuses.filter((r) => r.status === 'pending')).toEqual([{ call_id: pendingCallId, status: 'pending' }]);

    // 2. A grown copy imports only what is new; the pending call is completed in place.
    appendFileSync(rollout, full.subarray(headBytes + Buffer.byteLength(outputLine.slice(0, Math.floor(outputLine.length / 2)), 'utf8')));
    expect(readFileSync(rollout).equals(full)).toBe(true);
    const all = parseRollout(rollout, full).events;
    const grown = await runImport(codexImporter, [join(dir, 'sessions')], sink);
    expect(grown.filesRead).toBe(1);
    // Every event except the pending call was written already; the call comes again, completed.
    expect(grown.eventsAlreadyImported).toBe(firstEmitted - 1);
    expect(grown.eventsEmitted).toBe(all.length - grown.eventsAlreadyImported);
    expect(grown.eventsEmitted).toBe(functionCalls(lines).length + referenceUsage(lines).requests - (firstEmitted - 1));
    expect(grown.counts.rowsWritten + grown.counts.deadLetters).toBe(grown.eventsEmitted);

    expect(await sessionUsage(sink, SESSION)).toEqual(referenceUsage(lines));
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE session_id = '${SESSION}'`)).toBe(functionCalls(lines).length);
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE session_id = '${SESSION}' AND status = 'pending'`)).toBe(0);
    const [completed] = await sink.queryRows<{ status: string; source: string; output_bytes: string }>(
      `SELECT status, source, output_bytes FROM tool_calls FINAL WHERE call_id = '${pendingCallId}'`,
    );
    expect(completed?.status).not.toBe('pending');
    expect(completed?.source).toBe(`${rollout}:${callIndex + 2}`);
    expect(Number(completed?.output_bytes)).toBeGreaterThan(0);

    // 3. A third import of the unchanged file reads nothing and changes nothing.
    const before = await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL');
    const third = await runImport(codexImporter, [join(dir, 'sessions')], sink);
    expect([third.filesUnchanged, third.eventsEmitted]).toEqual([1, 0]);
    expect(await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL')).toBe(before);
  });
});

describe('codex arguments that are not JSON', () => {
  it('keeps arguments that are not JSON verbatim as raw_input, flagged input_not_json', async () => {
    const badShell = '{"command":["bash","-lc","echo \\"unterminated"],"workdir":"/w"';
    const badMcp = '{"project": "/home/u/p", "note": "runaway \u65e5\u672c ';
    const file = join(dir, 'rollout-2025-10-07T23-48-07-0199bf24-0000-7000-8000-00000000beef.jsonl');
    const rec = (ts: string, type: string, payload: Record<string, unknown>): string => JSON.stringify({ timestamp: ts, type, payload });
    writeFileSync(
      file,
      [
        rec('2025-10-07T14:55:00.000Z', 'session_meta', { id: '0199bf24-0000-7000-8000-00000000beef', timestamp: '2025-10-07T14:55:00.000Z', cli_version: '0.44.0' }),
        rec('2025-10-07T14:55:01.000Z', 'turn_context', { model: 'gpt-5-codex' }),
        rec('2025-10-07T14:55:02.000Z', 'response_item', { type: 'function_call', name: 'shell', arguments: badShell, call_id: 'call_bad_shell' }),
        rec('2025-10-07T14:55:02.001Z', 'response_item', { type: 'function_call_output', call_id: 'call_bad_shell', output: 'failed to parse function arguments: EOF while parsing an object at line 1 column 61' }),
        rec('2025-10-07T14:55:03.000Z', 'response_item', { type: 'function_call', name: 'serena__activate_project', arguments: badMcp, call_id: 'call_bad_mcp' }),
        rec('2025-10-07T14:55:03.001Z', 'response_item', { type: 'function_call_output', call_id: 'call_bad_mcp', output: 'failed to parse function arguments: EOF' }),
      ].join('\n') + '\n',
    );
    const s = await runImport(codexImporter, [file], sink);
    expect([s.eventsEmitted, s.counts.rowsWritten, s.counts.deadLetters]).toEqual([2, 2, 0]);
    const rows = await sink.queryRows<{ call_id: string; raw_input: string; flags: string[]; status: string; namespace: string }>(
      "SELECT call_id, raw_input, flags, status, namespace FROM tool_calls FINAL WHERE call_id LIKE 'call_bad_%' ORDER BY call_id",
    );
    expect(rows).toEqual([
      { call_id: 'call_bad_mcp', raw_input: badMcp, flags: ['input_not_json'], status: 'error', namespace: 'mcp' },
      { call_id: 'call_bad_shell', raw_input: badShell, flags: ['input_not_json'], status: 'error', namespace: 'codex' },
    ]);
  });
});
