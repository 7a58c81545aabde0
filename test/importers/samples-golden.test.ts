// Golden outputs of the line importers that had a whole-file oracle (Claude Code, Codex, opencode,
// Gemini CLI, ACP, OTLP) on every real sample of the shared corpus they read
// (../shared/corpus/samples, a few real corpus files) and on their committed fixtures: each
// file's events, malformed records and counters equal golden/<importer>/<file>.golden.jsonl
// (golden.ts; rewritten only with UPDATE_GOLDEN=1, and reviewed). Files of the corpus are
// checked when it is there (corpusOrSkip).
import { readdirSync, readFileSync, utimesSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acpImporter } from '../../src/importers/acp/index.ts';
import { claudeCodeImporter } from '../../src/importers/claude-code/index.ts';
import { codexImporter } from '../../src/importers/codex/index.ts';
import { geminiCliImporter } from '../../src/importers/gemini-cli/index.ts';
import { opencodeImporter } from '../../src/importers/opencode/index.ts';
import { otlpImporter } from '../../src/importers/otlp/index.ts';
import type { Importer } from '../../src/importers/types.ts';
import { CORPUS_ROOT, corpusOrSkip } from '../helpers/corpus.ts';
import { expectGolden, goldenLines } from './golden.ts';

const HERE = new URL('./', import.meta.url).pathname.replace(/\/$/, '');
// A bare ACP capture has no timestamps: its events take the file's time (src/importers/acp), so
// the file is given the time its golden file was written with (a checkout gives it the clone's).
// (In seconds with half a millisecond more: the file system keeps a time the float rounds below.)
const BARE_ACP_TIME = (Date.parse('2026-12-06T21:12:40.100Z') + 0.5) / 1000;
utimesSync(join(HERE, 'fixtures-acp/claude-code-acp.bare.jsonl'), BARE_ACP_TIME, BARE_ACP_TIME);
const SUITE = 'the importer golden outputs on corpus samples (test/importers/samples-golden.test.ts)';

interface GoldenCase {
  readonly importer: Importer;
  /** Files under `base` (the corpus or this folder), relative to it. */
  readonly files: readonly string[];
  readonly base: string;
  /** The bytes as read, changed before the parse (the golden file's name says how). */
  readonly rewrite?: { readonly name: string; readonly change: (text: string) => string };
}

/** A corpus file, or every file of a corpus folder; none when the corpus is absent. */
function inCorpus(sub: string): string[] {
  const dir = corpusOrSkip(sub, SUITE);
  if (!dir) return [];
  return sub.endsWith('.jsonl') ? [sub] : readdirSync(dir).sort().map((n) => `${sub}/${n}`);
}

const CASES: readonly GoldenCase[] = [
  { importer: claudeCodeImporter, base: HERE, files: ['fixtures-claude-code/tool-search.jsonl'] },
  { importer: claudeCodeImporter, base: CORPUS_ROOT, files: [...inCorpus('claude-code/projects/spotter/short.jsonl'), ...inCorpus('claude-code/projects/spotter/tool_heavy.jsonl')] },
  { importer: codexImporter, base: CORPUS_ROOT, files: [...inCorpus('samples/codex'), ...inCorpus('codex/sessions/2025/08/14/rollout-2025-08-14T18-42-29-8b3d642f-5974-47c8-b9d4-09efcc975a02.jsonl')] },
  { importer: opencodeImporter, base: CORPUS_ROOT, files: inCorpus('samples/opencode') },
  { importer: geminiCliImporter, base: CORPUS_ROOT, files: inCorpus('samples/gemini_cli') },
  {
    importer: geminiCliImporter,
    base: HERE,
    files: [
      'fixtures-gemini-cli/tmp/5d2e8b1f0c4a7e3d9b6f2a8c1e5d7b0f3a9c6e2d8b4f1a7c0e3d5b9f2a6c8e4d/chats/session-2025-09-12T08-14-1f0e9d8c.json',
      'fixtures-gemini-cli/tmp/a3f1c9e07b52d4186e0f9c2b7d31a5e8f4c6b0d29e7a1f3c5b8d0e2a4c6f8b1d/chats/7c1e4a2b-9d3f-4e8a-b5c6-0f1d2e3a4b5c/e2b7d0c4-1a9f-4c3e-8b6d-5f0a1e2c3d4b.jsonl',
      'fixtures-gemini-cli/tmp/a3f1c9e07b52d4186e0f9c2b7d31a5e8f4c6b0d29e7a1f3c5b8d0e2a4c6f8b1d/chats/session-2026-04-29T21-39-7c1e4a2b.jsonl',
    ],
  },
  { importer: acpImporter, base: HERE, files: ['fixtures-acp/claude-code-acp.bare.jsonl', 'fixtures-acp/grok-build-session.capture.jsonl'] },
  { importer: otlpImporter, base: HERE, files: ['fixtures-otlp/claude-code-events.jsonl', 'fixtures-otlp-join/otel.jsonl'] },
  { importer: otlpImporter, base: CORPUS_ROOT, files: [...inCorpus('samples/claude_code_otel'), ...inCorpus('samples/otel_genai')] },
  // The GenAI samples' service names no harness (their spans are counted, not read): the same
  // bytes as a Codex service sends them reach the span reading.
  {
    importer: otlpImporter,
    base: CORPUS_ROOT,
    files: inCorpus('samples/otel_genai').filter((f) => f.includes('akmon') && !f.includes('LEGACY')),
    rewrite: { name: 'as-codex_exec', change: (text) => text.replaceAll('"agef-demo-agent"', '"codex_exec"') },
  },
];

const rows = CASES.flatMap((c) => c.files.map((f) => [`${c.importer.id} ${f}${c.rewrite ? ` ${c.rewrite.name}` : ''}`, c, f] as const));

describe('golden importer outputs on real samples and fixtures', () => {
  it.each(rows)('%s', (_name, c, file) => {
    const path = join(c.base, file);
    const data = c.rewrite ? Buffer.from(c.rewrite.change(readFileSync(path, 'utf8')), 'utf8') : readFileSync(path);
    const parsed = c.importer.parseFile(path, data);
    expect(parsed.events.length + (parsed.malformed?.length ?? 0) + Object.keys(parsed.skipped).length, 'a sample the importer reads nothing of proves nothing').toBeGreaterThan(0);
    if (c.rewrite) expect(parsed.events.length, 'the rewritten sample gives events').toBeGreaterThan(0);
    expectGolden(`${c.importer.id}/${basename(file)}${c.rewrite ? `.${c.rewrite.name}` : ''}`, goldenLines(parsed, file, c.base));
  });
});
