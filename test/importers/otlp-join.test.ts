// A Claude Code session imported from its transcript (claude-code importer) and from its OTel
// export (otlp importer) into one database, in both orders: one row per call and per request,
// and for a call the transcript's copy (the richer: output and whole input) whichever came
// first. The two fixtures (fixtures-otlp-join/) were written by hand from one scenario: a
// prompt, a Bash call, an MCP call (logged as `mcp_tool`, no tool details) and an Edit the user
// rejected, each after one API request. The expected rows are read from the transcript fixture
// here, independently of the importers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCodeImporter } from '../../src/importers/claude-code/index.ts';
import { otlpImporter } from '../../src/importers/otlp/index.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { openTempSink } from '../helpers/db.ts';

const DIR = join(import.meta.dirname, 'fixtures-otlp-join');
const SESSION = '7c2e9d4a-1b3f-4e5a-8c6d-9f0a1b2c3d4e';
const TRANSCRIPT = join(DIR, 'transcript', `${SESSION}.jsonl`);
const OTEL = join(DIR, 'otel.jsonl');

interface TranscriptLine {
  type: string;
  uuid: string;
  requestId?: string;
  message: { content: unknown; usage?: Record<string, number> };
}

/** What the transcript says, read straight from its JSON: the calls and the requests. */
function expectedFromTranscript(): {
  calls: { call_id: string; tool_name: string; status: string; raw_input: string; output_bytes: number; turn_id: string }[];
  requests: { request_id: string; input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_write_tokens: number }[];
} {
  const lines = readFileSync(TRANSCRIPT, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as TranscriptLine);
  const prompt = lines[0]?.uuid ?? '';
  const results = new Map<string, { content: string; is_error?: boolean }>();
  for (const l of lines) {
    if (l.type !== 'user' || !Array.isArray(l.message.content)) continue;
    for (const b of l.message.content as { tool_use_id: string; content: string; is_error?: boolean }[]) results.set(b.tool_use_id, b);
  }
  const calls = [];
  const requests = [];
  for (const l of lines) {
    if (l.type !== 'assistant') continue;
    const u = l.message.usage ?? {};
    requests.push({ request_id: l.requestId ?? '', input_tokens: u['input_tokens'] ?? 0, output_tokens: u['output_tokens'] ?? 0, cache_read_tokens: u['cache_read_input_tokens'] ?? 0, cache_write_tokens: u['cache_creation_input_tokens'] ?? 0 });
    for (const b of l.message.content as { id: string; name: string; input: unknown }[]) {
      const r = results.get(b.id);
      calls.push({
        call_id: b.id,
        // MCP tools are stored qualified, the harness's `mcp__` prefix stripped (SPEC §2).
        tool_name: b.name.replace(/^mcp__/, ''),
        status: r?.is_error === true ? 'error' : 'ok',
        raw_input: JSON.stringify(b.input),
        output_bytes: Buffer.byteLength(r?.content ?? '', 'utf8'),
        turn_id: prompt,
      });
    }
  }
  return { calls, requests };
}

const expected = expectedFromTranscript();

for (const order of ['transcript first', 'telemetry first'] as const) {
  describe(`one Claude Code session from its transcript and its OTel export, ${order}`, () => {
    let sink: ClickHouseSink;
    let cleanup: () => Promise<void>;
    const summaries: ImportSummary[] = [];

    beforeAll(async () => {
      ({ sink, cleanup } = await openTempSink(`otlp-join-${order.split(' ')[0] ?? ''}`));
      const steps = [() => runImport(claudeCodeImporter, [TRANSCRIPT], sink), () => runImport(otlpImporter, [OTEL], sink)];
      if (order === 'telemetry first') steps.reverse();
      for (const step of steps) summaries.push(await step());
    });
    afterAll(async () => {
      await cleanup?.();
    });

    it('reads 3 calls and 3 requests from each source, every event a row or a dead letter', () => {
      expect(expected.calls).toHaveLength(3);
      expect(expected.requests).toHaveLength(3);
      for (const s of summaries) {
        expect(s.eventsEmitted).toBe(6);
        expect(s.counts.rowsWritten + s.counts.deadLetters).toBe(6);
        expect(s.counts.deadLetters).toBe(0);
      }
    });

    it("keeps one row per call, the transcript's copy: its name, input, output size, turn and source", async () => {
      const rows = await sink.queryRows<Record<string, unknown>>(
        'SELECT call_id, tool_name, status, raw_input, output_bytes, turn_id, source FROM tool_calls FINAL ORDER BY ts, call_id',
      );
      expect(rows.map(({ source: _source, ...r }) => ({ ...r, output_bytes: Number(r['output_bytes']) }))).toEqual(expected.calls);
      for (const r of rows) expect(String(r['source'])).toMatch(new RegExp(`^${TRANSCRIPT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+$`));
    });

    it('keeps one observed usage row per request, with the figures both copies carry', async () => {
      const rows = await sink.queryRows<Record<string, unknown>>(
        "SELECT request_id, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens FROM token_usage FINAL WHERE source = 'observed' ORDER BY request_id",
      );
      expect(rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, k === 'request_id' ? v : Number(v)])))).toEqual(expected.requests);
    });

    it('applies each request to the context once: the second source adds no context figure', async () => {
      const applied = await sink.queryRows<{ n: string | number }>({
        query: "SELECT count() AS n FROM token_usage WHERE source = 'observed' AND session_id = {s:String}",
        query_params: { s: SESSION },
      });
      // Rows as inserted (no FINAL): the second copy of each request was skipped as a duplicate.
      expect(Number(applied[0]?.n)).toBe(3);
      expect(summaries[1]?.counts.duplicatesSkipped).toBe(3);
    });
  });
}
