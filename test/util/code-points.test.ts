// codePointLength replaces ajv's runtime helper in the generated validators: it must count as
// that helper does on every string, surrogates paired, lone, reversed and at either end.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import ucs2 from 'ajv/dist/runtime/ucs2length.js';
import { codePointLength } from '../../src/util/code-points.ts';
import { fixtureLines } from '../../bench/fixtures.ts';

const ajvLength = (typeof ucs2 === 'function' ? ucs2 : (ucs2 as unknown as { default: (s: string) => number }).default) as (s: string) => number;

describe('codePointLength', () => {
  it('counts what ajv counts on hand-picked strings', () => {
    const cases = ['', 'a', 'abc', '😀', 'a😀b', '😀😀', '\uD83D', '\uDE00', '\uDE00\uD83D', 'x\uD83D', '\uD83Dx', '\uD83D\uD83D\uDE00', '中文', 'é', '\uDBFF\uDFFF', '\uD800\uDC00'];
    for (const s of cases) expect(codePointLength(s)).toBe(ajvLength(s));
    expect(codePointLength('a😀b')).toBe(3);
    expect(codePointLength('\uD83D\uD83D\uDE00')).toBe(2);
  });

  it('counts what ajv counts on generated strings of any code units and on every fixture string', () => {
    const units = fc.array(fc.oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0xd7f0, max: 0xe010 }), fc.integer({ min: 0, max: 0xffff })), { maxLength: 40 }).map((a) => String.fromCharCode(...a));
    fc.assert(fc.property(fc.oneof(units, fc.string({ unit: 'binary', maxLength: 40 })), (s) => {
      expect(codePointLength(s)).toBe(ajvLength(s));
    }), { seed: 20261205, numRuns: 20_000 });
    for (const line of fixtureLines()) {
      for (const v of Object.values(JSON.parse(line) as Record<string, unknown>)) if (typeof v === 'string') expect(codePointLength(v)).toBe(ajvLength(v));
    }
  });
});
