// Each real file of the shared corpus (../shared/corpus: 8 Claude Code transcripts, 63 Codex
// rollouts) imported alone against figures computed without the importer: sessions, requests,
// tokens by kind, tool calls by tool (and Claude Code's errors). The figures are
// figures/corpus-figures.json, printed by figures/corpus_figures.py (python3, plain json over the
// raw lines, the corpus README's definitions applied per file); their sums are the corpus README's
// reference figures, which its author computed on their own. The importer's events are only
// counted and summed here: whatever the parser gets wrong in one file shows in that file's row.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCodeImporter } from '../../src/importers/claude-code/index.ts';
import { codexImporter } from '../../src/importers/codex/index.ts';
import type { Importer } from '../../src/importers/types.ts';
import { CORPUS_ROOT, corpusOrSkip } from '../helpers/corpus.ts';

interface ClaudeFigures {
  sessions: string[];
  responses: number;
  input: number;
  output: number;
  cache_write: number;
  cache_read: number;
  calls: number;
  errors: number;
  by_tool: Record<string, number>;
}
interface CodexFigures {
  session: string;
  requests: number;
  input: number;
  cached: number;
  output: number;
  reasoning: number;
  calls: number;
  by_tool: Record<string, number>;
}
const FIGURES = JSON.parse(readFileSync(new URL('./figures/corpus-figures.json', import.meta.url), 'utf8')) as { 'claude-code': Record<string, ClaudeFigures>; codex: Record<string, CodexFigures> };

type Body = Record<string, unknown>;

/** The importer's events of one file, parsed. */
function eventsOf(importer: Importer, path: string): { usage: Body[]; calls: Body[] } {
  const parsed = importer.parseFile(path, readFileSync(path));
  expect(parsed.malformed ?? [], path).toEqual([]);
  const bodies = parsed.events.map((e) => JSON.parse(e.envelope.text) as Body);
  return { usage: bodies.filter((b) => b['type'] === 'usage'), calls: bodies.filter((b) => b['type'] === 'tool_call') };
}

const sum = (rows: readonly Body[], key: string): number => rows.reduce((n, r) => n + (typeof r[key] === 'number' ? r[key] : 0), 0);
function byTool(calls: readonly Body[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of calls) out[String(c['tool'])] = (out[String(c['tool'])] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}
const total = (rows: readonly Record<string, unknown>[], key: string): number => rows.reduce((n, r) => n + Number(r[key]), 0);

const CLAUDE = corpusOrSkip('claude-code', 'the per-file Claude Code corpus figures (test/importers/corpus-figures.test.ts)');
const CODEX = corpusOrSkip('codex', 'the per-file Codex corpus figures (test/importers/corpus-figures.test.ts)');

describe.skipIf(!CLAUDE)('Claude Code corpus, file by file, against corpus_figures.py', () => {
  const expected = FIGURES['claude-code'];

  it('the figures add up to the corpus README: 313 responses, 379 calls by tool, the token sums', () => {
    const rows = Object.values(expected);
    expect(rows).toHaveLength(8);
    expect(['responses', 'input', 'output', 'cache_write', 'cache_read', 'calls'].map((k) => total(rows as unknown as Record<string, unknown>[], k))).toEqual([313, 488, 68_032, 985_143, 27_459_833, 379]);
    const tools: Record<string, number> = {};
    for (const r of rows) for (const [t, n] of Object.entries(r.by_tool)) tools[t] = (tools[t] ?? 0) + n;
    expect(tools).toEqual({ Bash: 154, Read: 90, Edit: 67, Write: 20, Glob: 20, Grep: 17, TaskOutput: 4, WebFetch: 3, Task: 2, AskUserQuestion: 1, WebSearch: 1 });
  });

  it('every transcript imported alone gives its figures', () => {
    const files = claudeCodeImporter.listFiles([CLAUDE ?? '']).sort();
    expect(files.map((f) => relative(CORPUS_ROOT, f))).toEqual(Object.keys(expected));
    for (const f of files) {
      const { usage, calls } = eventsOf(claudeCodeImporter, f);
      const got: ClaudeFigures = {
        sessions: [...new Set([...usage, ...calls].map((e) => String(e['session_id'])))].sort(),
        responses: usage.length,
        input: sum(usage, 'input_tokens'),
        output: sum(usage, 'output_tokens'),
        cache_write: sum(usage, 'cache_write_tokens'),
        cache_read: sum(usage, 'cache_read_tokens'),
        calls: calls.length,
        errors: calls.filter((c) => c['status'] === 'error').length,
        by_tool: byTool(calls),
      };
      expect(got, f).toEqual(expected[relative(CORPUS_ROOT, f)]);
    }
  });
});

describe.skipIf(!CODEX)('Codex corpus, file by file, against corpus_figures.py', () => {
  const expected = FIGURES.codex;

  it('the figures add up to the corpus README: 22 sessions with tokens, the token deltas, 1 889 calls', () => {
    const rows = Object.values(expected);
    expect(rows).toHaveLength(63);
    expect(rows.filter((r) => r.requests > 0)).toHaveLength(22);
    expect(['input', 'cached', 'output', 'reasoning', 'calls'].map((k) => total(rows as unknown as Record<string, unknown>[], k))).toEqual([150_616_567, 146_882_816, 694_731, 400_768, 1889]);
    // 1 979 token_count events with figures, 369 of them repeats of the previous total.
    expect(total(rows as unknown as Record<string, unknown>[], 'requests')).toBe(1979 - 369);
    const tools: Record<string, number> = {};
    for (const r of rows) for (const [t, n] of Object.entries(r.by_tool)) tools[t] = (tools[t] ?? 0) + n;
    const mcp = Object.entries(tools).filter(([t]) => t.includes('__'));
    expect([tools['shell'], tools['update_plan'], mcp.reduce((n, [, c]) => n + c, 0), new Set(mcp.map(([t]) => t.split('__')[0])).size]).toEqual([1194, 86, 609, 9]);
  });

  it('every rollout imported alone gives its figures', () => {
    const files = codexImporter.listFiles([CODEX ?? '']).sort();
    expect(files.map((f) => relative(CORPUS_ROOT, f))).toEqual(Object.keys(expected).sort());
    for (const f of files) {
      const { usage, calls } = eventsOf(codexImporter, f);
      const sessions = [...new Set([...usage, ...calls].map((e) => String(e['session_id'])))];
      const want = expected[relative(CORPUS_ROOT, f)];
      const got: CodexFigures = {
        session: sessions.length === 0 ? (want?.session ?? '') : sessions.join(','),
        requests: usage.length,
        input: sum(usage, 'input_tokens'),
        cached: sum(usage, 'cache_read_tokens'),
        output: sum(usage, 'output_tokens'),
        reasoning: sum(usage, 'reasoning_tokens'),
        calls: calls.length,
        by_tool: byTool(calls),
      };
      expect(got, f).toEqual(want);
    }
  });
});

