// Cost in `report usage`, through the real CLI: the shared corpus's cost of two models computed by
// hand from the raw token sums and the published prices equals the report's cost_usd; an unknown
// model is flagged and never costs zero; --by session|day|model add up to the same total. On both
// engines with the same assertions (test/helpers/engines.ts: embedded chdb and a ClickHouse server).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_PRICES } from '../../src/cost/prices.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { makeTempDir } from '../helpers/db.ts';
import { cliEnv, forEachEngine } from '../helpers/engines.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('cost');
afterAll(() => tmp.cleanup());

/** `toolcanon ARGS` on one database: `--db DIR` or `--clickhouse URL`. */
function toolcanon(db: readonly string[], args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args, ...db], { cwd: tmp.dir, encoding: 'utf8', env: cliEnv() });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const jsonLines = (text: string): Record<string, unknown>[] => (text.trim() === '' ? [] : text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>));

/** Exact dollars (JSON number text of at most 6 decimals) as micro-dollars. */
function micro(v: unknown): bigint {
  const [whole = '0', frac = ''] = String(v).split('.');
  return BigInt(whole) * 1_000_000n + BigInt((frac + '000000').slice(0, 6));
}
/** tokens × dollars per million tokens, in pico-dollars; the sum rounded half up to micro-dollars. */
const pico = (tokens: bigint, usdPerMillion: string): bigint => tokens * micro(usdPerMillion);
const roundToMicro = (p: bigint): bigint => (p + 500_000n) / 1_000_000n;

await forEachEngine('test/cli/report-cost.test.ts', (engine) => {
  describe('report usage: cost of the shared corpus, by hand', () => {
    let corpus: readonly string[] = [];
    const claude = corpusOrSkip('claude-code', 'test/cli/report-cost.test.ts (corpus cost)');
    const codex = corpusOrSkip('codex', 'test/cli/report-cost.test.ts (corpus cost)');
    const skip = claude === null || codex === null;
    let byModel: Record<string, Record<string, unknown>> = {};

    beforeAll(async () => {
      if (skip) return;
      corpus = (await engine.database('cost-corpus')).flags;
      for (const [which, dir] of [['claude-code', claude], ['codex', codex]] as const) {
        const r = toolcanon(corpus, ['import', which, dir as string, '--format', 'json']);
        expect(r.code, r.stderr).toBe(0);
      }
      const r = toolcanon(corpus, ['report', 'usage', '--by', 'model', '--format', 'json']);
      expect(r.code, r.stderr).toBe(0);
      byModel = Object.fromEntries(jsonLines(r.stdout).map((row) => [String(row['model']), row]));
    });

    /** Raw sums per kind of one model's observed requests, and how many requests saturate. */
    function rawSums(model: string): { i: bigint; cr: bigint; cw: bigint; o: bigint; r: bigint; cachedAboveInput: number } {
      const q = toolcanon(corpus, ['query', `SELECT toString(sum(input_tokens)) AS i, toString(sum(ifNull(cache_read_tokens, 0))) AS cr,
        toString(sum(ifNull(cache_write_tokens, 0))) AS cw, toString(sum(output_tokens)) AS o, toString(sum(ifNull(reasoning_tokens, 0))) AS r,
        countIf(ifNull(cache_read_tokens, 0) + ifNull(cache_write_tokens, 0) > input_tokens) AS cached_above_input
        FROM token_usage FINAL WHERE source = 'observed' AND model = '${model}'`, '--format', 'json']);
      expect(q.code, q.stderr).toBe(0);
      const [row] = jsonLines(q.stdout);
      return { i: BigInt(String(row!['i'])), cr: BigInt(String(row!['cr'])), cw: BigInt(String(row!['cw'])), o: BigInt(String(row!['o'])), r: BigInt(String(row!['r'])), cachedAboveInput: Number(row!['cached_above_input']) };
    }

    it.skipIf(skip)('claude-opus-4-6 (Claude Code: input excludes cache, thinking is in output)', () => {
      // The published prices (platform.claude.com pricing, Claude Opus 4.6), as the table ships them.
      expect(SHIPPED_PRICES['claude-opus-4-6']).toMatchObject({ input: 5, cache_read: 0.5, cache_write: 6.25, output: 25 });
      const s = rawSums('claude-opus-4-6');
      expect(s.r).toBe(0n);
      const hand = roundToMicro(pico(s.i, '5') + pico(s.cr, '0.5') + pico(s.cw, '6.25') + pico(s.o, '25'));
      expect(micro(byModel['claude-opus-4-6']?.['cost_usd'])).toBe(hand);
      // 420 input, 26,821,518 cache read, 871,710 cache write, 67,893 output tokens.
      expect(hand).toBe(20_558_372n);
      expect(byModel['claude-opus-4-6']).toMatchObject({ cost_flags: '', price_key: 'claude-opus-4-6' });
    });

    it.skipIf(skip)('gpt-5-codex (Codex: input includes cached input, reasoning is in output)', () => {
      expect(SHIPPED_PRICES['gpt-5-codex']).toMatchObject({ input: 1.25, cache_read: 0.125, output: 10 });
      const s = rawSums('gpt-5-codex');
      // Cached input is part of input_tokens: charged once at the cached price, the rest at the
      // input price. No request reports more cached than input, so the sums give the per-request sum.
      expect(s.cachedAboveInput).toBe(0);
      expect(s.cw).toBe(0n);
      const hand = roundToMicro(pico(s.i - s.cr, '1.25') + pico(s.cr, '0.125') + pico(s.o, '10'));
      expect(micro(byModel['gpt-5-codex']?.['cost_usd'])).toBe(hand);
      expect(hand).toBe(27_294_076n);
      // Reasoning tokens (356,800) are inside output_tokens: charged once, as output.
      expect(s.r).toBe(356_800n);
    });

    it.skipIf(skip)('a dated snapshot is priced as its model; every group adds up to the same total', () => {
      expect(byModel['claude-sonnet-4-5-20250929']).toMatchObject({ price_key: 'claude-sonnet-4-5', cost_flags: '' });
      const total = Object.values(byModel).reduce((n, r) => n + micro(r['cost_usd']), 0n);
      for (const by of ['session', 'day'] as const) {
        const r = toolcanon(corpus, ['report', 'usage', '--by', by, '--format', 'json']);
        expect(r.code, r.stderr).toBe(0);
        const sum = jsonLines(r.stdout).reduce((n, row) => n + micro(row['cost_usd']), 0n);
        // Each row is rounded to micro-dollars on its own: at most half a micro-dollar off per row.
        expect(Number(sum - total) ** 2, by).toBeLessThanOrEqual((jsonLines(r.stdout).length / 2) ** 2);
      }
    });
  });

  describe('report usage on the fixtures: unknown prices are flagged, never zero', () => {
    let fixtures: readonly string[] = [];
    beforeAll(async () => {
      fixtures = (await engine.database('cost-fixtures')).flags;
      const r = toolcanon(fixtures, ['replay', join(ROOT, 'fixtures'), '--format', 'json']);
      expect(r.code, r.stderr).toBe(0);
    });

    it('grok-4 has no shipped price: cost_usd is null and the row says why', () => {
      const r = toolcanon(fixtures, ['report', 'usage', '--format', 'json']);
      expect(r.code, r.stderr).toBe(0);
      const rows = jsonLines(r.stdout).filter((x) => Number(x['requests']) > 0);
      expect(rows).toEqual([expect.objectContaining({ harness: 'grok_build', model: 'grok-4', requests: 5, cost_usd: null, cost_flags: 'unknown_price:grok-4=5' })]);
      // Groups without an observed request cost nothing, truly.
      expect(jsonLines(r.stdout).filter((x) => Number(x['requests']) === 0).every((x) => x['cost_usd'] === 0 && x['cost_flags'] === '')).toBe(true);
      const session = jsonLines(toolcanon(fixtures, ['report', 'usage', '--by', 'session', '--format', 'json']).stdout).find((x) => x['session_id'] === 'sess-compaction');
      expect(session).toMatchObject({ harness: 'grok_build', models: 'grok-4', calls: 4, requests: 5, breaches: 2, cost_usd: null, cost_flags: 'unknown_price:grok-4=5' });
    });

    it('--prices FILE prices it: input (cache included, none here) and output by hand', () => {
      const file = join(tmp.dir, 'grok.json');
      writeFileSync(file, JSON.stringify({ 'grok-4': { input: 3, cache_read: 0.75, cache_write: 3, output: 15, note: 'a test price' } }));
      const r = toolcanon(fixtures, ['report', 'usage', '--by', 'day', '--prices', file, '--format', 'json']);
      expect(r.code, r.stderr).toBe(0);
      const day = jsonLines(r.stdout).find((x) => x['day'] === '2026-12-01');
      // 314,000 input tokens × $3/M + 4,499 output tokens × $15/M = $0.942 + $0.067485.
      expect(day).toMatchObject({ requests: 5, input_tokens: 314000, output_tokens: 4499, cost_usd: 1.009485, cost_flags: '' });
    });

    it('a prompt above the model\'s max_prompt_tokens is priced by its long_context prices, or flagged without them', () => {
      // The requests' own figures, read back with plain SQL (grok_build: input includes no cache here).
      const q = toolcanon(fixtures, ['query', "SELECT toString(input_tokens) AS i, toString(output_tokens) AS o FROM token_usage FINAL WHERE source = 'observed' AND model = 'grok-4' ORDER BY input_tokens", '--format', 'json']);
      expect(q.code, q.stderr).toBe(0);
      const requests = jsonLines(q.stdout).map((x) => ({ i: BigInt(String(x['i'])), o: BigInt(String(x['o'])) }));
      expect(requests).toHaveLength(5);
      // A limit between the second and the third prompt: two requests below it, three above.
      const limit = (requests[1]!.i + requests[2]!.i) / 2n;
      expect(requests[1]!.i < limit && limit < requests[2]!.i).toBe(true);
      // Another model's limit first in the table, above every prompt: the band must be grok-4's own.
      const table = (longContext: boolean): string => {
        const file = join(tmp.dir, `grok-long-${longContext}.json`);
        writeFileSync(file, JSON.stringify({
          'other-model': { input: 1, cache_read: 1, cache_write: 1, output: 1, max_prompt_tokens: 10_000_000 },
          'grok-4': { input: 3, cache_read: 0.75, cache_write: 3, output: 15, max_prompt_tokens: Number(limit), ...(longContext ? { long_context: { input: 6, cache_read: 1.5, cache_write: 6, output: 22.5 } } : {}) },
        }));
        return file;
      };
      const expected = requests.reduce((sum, r) => (r.i > limit ? sum + pico(r.i, '6') + pico(r.o, '22.5') : sum + pico(r.i, '3') + pico(r.o, '15')), 0n);
      const priced = toolcanon(fixtures, ['report', 'usage', '--by', 'day', '--prices', table(true), '--format', 'json']);
      expect(priced.code, priced.stderr).toBe(0);
      const day = jsonLines(priced.stdout).find((x) => x['day'] === '2026-12-01');
      expect(day).toMatchObject({ requests: 5, cost_flags: '' });
      expect(micro(day?.['cost_usd'])).toBe(roundToMicro(expected));
      const flagged = toolcanon(fixtures, ['report', 'usage', '--by', 'day', '--prices', table(false), '--format', 'json']);
      expect(flagged.code, flagged.stderr).toBe(0);
      expect(jsonLines(flagged.stdout).find((x) => x['day'] === '2026-12-01')).toMatchObject({ requests: 5, cost_usd: null, cost_flags: 'above_price_limit:grok-4=3' });
    });

    it('usage mistakes exit 2 before any work', () => {
      const bad = toolcanon(fixtures, ['report', 'usage', '--by', 'tool']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--by must be one of session, day, model, host for report usage');
      for (const [args, message] of [
        [['report', 'html', '--since', '2026-13-01'], '--since must be a day as YYYY-MM-DD'],
        [['report', 'html', '--harness', 'cursor'], '--harness must be one of'],
        [['report', 'html', '--since', '2026-12-02', '--until', '2026-12-01'], '--since 2026-12-02 is after --until 2026-12-01'],
      ] as const) {
        const r = toolcanon(fixtures, [...args]);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr).toContain(message);
      }
      const missing = toolcanon(fixtures, ['report', 'usage', '--prices', join(tmp.dir, 'nope.json')]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('nope.json: cannot read the price table');
    });
  });
});
