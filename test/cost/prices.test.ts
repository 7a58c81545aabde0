// The price table: matching, exact arithmetic, the --prices file format, and the shipped rows.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { costPicoDollars, formatUsd, PriceTable, SHIPPED_PRICES, toMicroDollars } from '../../src/cost/prices.ts';
import { makeTempDir } from '../helpers/db.ts';

const tmp = makeTempDir('prices');
afterAll(() => tmp.cleanup());

describe('price table', () => {
  const table = new PriceTable();

  it('matches a model by its name, a dated snapshot, or after a provider prefix', () => {
    expect(table.resolve('claude-sonnet-4-5')?.key).toBe('claude-sonnet-4-5');
    expect(table.resolve('claude-sonnet-4-5-20250929')?.key).toBe('claude-sonnet-4-5');
    expect(table.resolve('claude-opus-4-20250514')?.key).toBe('claude-opus-4');
    expect(table.resolve('claude-opus-4-5-20251101')?.key).toBe('claude-opus-4-5');
    expect(table.resolve('gpt-5-2025-08-07')?.key).toBe('gpt-5');
    expect(table.resolve('o4-mini-2025-04-16')?.key).toBe('o4-mini');
    expect(table.resolve('openai/gpt-5')?.key).toBe('gpt-5');
    expect(table.resolve('anthropic/claude-haiku-4-5')?.key).toBe('claude-haiku-4-5');
  });

  it('never lends a price to another model of the same family (no guess)', () => {
    for (const model of ['gpt-5-pro', 'gpt-5-nano', 'gpt-5.2-codex', 'claude-opus-4-7', 'claude-sonnet-4-5[1m]', 'grok-4', 'grok-code-fast-1', 'gemini-2.5-pro', '']) {
      expect(table.resolve(model), model).toBeUndefined();
    }
  });

  it('every shipped price has the four kinds, a date and a source URL', () => {
    for (const [model, p] of Object.entries(SHIPPED_PRICES)) {
      expect(p.date, model).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(p.source, model).toMatch(/^https:\/\//);
      for (const kind of [p.input, p.cache_read, p.cache_write, p.output]) expect(kind, model).toBeGreaterThan(0);
      // Cached reads are a discount on input; where writes are billed apart they cost more.
      expect(p.cache_read, model).toBeLessThan(p.input);
      expect(p.cache_write, model).toBeGreaterThanOrEqual(p.input);
    }
  });

  it('computes in integer pico-dollars and rounds half up to micro-dollars once', () => {
    const p = table.resolve('gpt-5-codex')!.base;
    expect(p).toEqual({ input: 1_250_000n, cacheRead: 125_000n, cacheWrite: 1_250_000n, output: 10_000_000n, reasoning: 10_000_000n });
    // 1 token of cached input costs $0.000000125: 0.125 micro-dollars, exact in pico-dollars.
    expect(costPicoDollars({ input: 0n, cacheRead: 1n, cacheWrite: 0n, output: 0n, reasoning: 0n }, p)).toBe(125_000n);
    expect(formatUsd(125_000n)).toBe('0.000000');
    expect(formatUsd(500_000n)).toBe('0.000001');
    expect(formatUsd(499_999n)).toBe('0.000000');
    // Float sums drift (0.1 + 0.2); integers do not: 10 million cached tokens cost exactly $1.25.
    expect(formatUsd(costPicoDollars({ input: 0n, cacheRead: 10_000_000n, cacheWrite: 0n, output: 0n, reasoning: 0n }, p))).toBe('1.250000');
    expect(formatUsd(2n ** 70n)).toBe('1180591620.717411');
  });

  it('refuses a price with more than 6 decimals or below zero', () => {
    expect(toMicroDollars(0.275, 'x')).toBe(275_000n);
    expect(toMicroDollars(0.000001, 'x')).toBe(1n);
    expect(() => toMicroDollars(0.0000005, 'x')).toThrow(/at most 6 decimals/);
    expect(() => toMicroDollars(-1, 'x')).toThrow(/non-negative/);
  });

  it('--prices lays a file over the shipped table; a bad file names the field', () => {
    const file = join(tmp.dir, 'prices.json');
    writeFileSync(file, JSON.stringify({ 'grok-4': { input: 3, cache_read: 0.75, cache_write: 3, output: 15, source: 'my contract' }, 'gpt-5': { input: 1, cache_read: 0.1, cache_write: 1, output: 8 } }));
    const t = PriceTable.withOverrides(file);
    expect(t.resolve('grok-4-0709')?.base.output).toBe(15_000_000n);
    expect(t.resolve('gpt-5')?.base.input).toBe(1_000_000n);
    expect(t.resolve('claude-opus-4-6')?.key).toBe('claude-opus-4-6');
    writeFileSync(file, JSON.stringify({ 'grok-4': { input: 3, output: 15 } }));
    expect(() => PriceTable.withOverrides(file)).toThrow(/prices\.json: a price table maps model names .*grok-4\.cache_read/);
    writeFileSync(file, JSON.stringify({ 'grok-4': { input: 3, cache_read: 0.75, cache_write: 3, output: 15, typo: 1 } }));
    expect(() => PriceTable.withOverrides(file)).toThrow(/grok-4/);
    expect(() => PriceTable.withOverrides(join(tmp.dir, 'missing.json'))).toThrow(/missing\.json: cannot read the price table/);
  });
});
