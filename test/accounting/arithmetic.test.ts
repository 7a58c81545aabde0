import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  estimateImageTokens,
  estimateTokens,
  exceedsThreshold,
  exceedsThresholdWithHeadroom,
  U64_MAX,
  usagePercentage,
  utf8ByteLength,
} from '../../src/accounting/arithmetic.ts';

describe('SPEC §5 table', () => {
  it('exceeds_threshold(850, 1000, 85) is true: 85 000 vs 85 000, equality triggers', () => {
    expect(exceedsThreshold(850, 1000, 85)).toBe(true);
  });
  it('exceeds_threshold(849, 1000, 85) is false: 84 900 < 85 000', () => {
    expect(exceedsThreshold(849, 1000, 85)).toBe(false);
  });
  it.each([
    [100_000, 0, 85_000],
    [100_000, 4_000, 81_000],
    [128_000, 0, 108_800],
    [128_000, 4_000, 104_800],
  ])('window %i, 85 %%, headroom %i: triggers at %i and not one token before', (window, headroom, trigger) => {
    expect(exceedsThresholdWithHeadroom(trigger, window, 85, headroom)).toBe(true);
    expect(exceedsThresholdWithHeadroom(trigger - 1, window, 85, headroom)).toBe(false);
    if (headroom === 0) {
      expect(exceedsThreshold(trigger, window, 85)).toBe(true);
      expect(exceedsThreshold(trigger - 1, window, 85)).toBe(false);
    }
  });
  it('usage_percentage(120, 100) is clamped to 100', () => {
    expect(usagePercentage(120, 100)).toBe(100);
  });
  it('usage_percentage(5, 0) is 0 (zero total)', () => {
    expect(usagePercentage(5, 0)).toBe(0);
  });
  it('usage_percentage(85, 100) is 85', () => {
    expect(usagePercentage(85, 100)).toBe(85);
  });
});

describe('zero window and saturation', () => {
  it('a zero window never exceeds, whatever is used', () => {
    expect(exceedsThreshold(U64_MAX, 0, 85)).toBe(false);
    expect(exceedsThresholdWithHeadroom(U64_MAX, 0, 85, 0)).toBe(false);
    expect(exceedsThreshold(0, 0, 0)).toBe(false);
  });

  it('multiplications saturate at 2^64 - 1 instead of growing', () => {
    // used*100 saturates to U64_MAX; window*85 saturates too: U64_MAX >= U64_MAX.
    expect(exceedsThreshold(U64_MAX, U64_MAX, 85)).toBe(true);
    // used*100 saturates while window*pct does not: true.
    expect(exceedsThreshold(U64_MAX / 100n + 1n, U64_MAX / 100n + 1n, 99)).toBe(true);
    // Both sides saturate: U64_MAX >= U64_MAX, true even though 1 token below the exact product.
    expect(exceedsThreshold(U64_MAX - 1n, U64_MAX, 100)).toBe(true);
    // Exact below 2^64: (2^57) * 100 < (2^57 + 1) * 100, not saturated.
    expect(exceedsThreshold(1n << 57n, (1n << 57n) + 1n, 100)).toBe(false);
    expect(exceedsThreshold((1n << 57n) + 1n, (1n << 57n) + 1n, 100)).toBe(true);
  });

  it('beyond 2^53 the comparison stays exact (a float would round the edge away)', () => {
    const window = (1n << 55n) + 1n; // not representable as a double
    expect(exceedsThreshold(window, window, 100)).toBe(true);
    expect(exceedsThreshold(window - 1n, window, 100)).toBe(false);
  });

  it('the headroom subtraction saturates at 0: then any usage triggers', () => {
    expect(exceedsThresholdWithHeadroom(0, 1000, 85, 10_000)).toBe(true);
    expect(exceedsThresholdWithHeadroom(0, 1000, 85, U64_MAX)).toBe(true);
    expect(exceedsThresholdWithHeadroom(0, 1000, 85, 849)).toBe(false);
    expect(exceedsThresholdWithHeadroom(0, 1000, 85, 850)).toBe(true);
  });

  it('refuses values outside u64 and u8 instead of guessing', () => {
    expect(() => exceedsThreshold(-1, 1000, 85)).toThrow(RangeError);
    expect(() => exceedsThreshold(U64_MAX + 1n, 1000, 85)).toThrow(RangeError);
    expect(() => exceedsThreshold(1, 1000, 256)).toThrow(RangeError);
    expect(() => exceedsThreshold(1.5, 1000, 85)).toThrow(RangeError);
    expect(() => exceedsThreshold(2 ** 60, 1000, 85)).toThrow(RangeError); // unsafe number: pass a bigint
  });

  it('headroom moves the trigger earlier by exactly the headroom (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 1_000_000 }), (window, pct, headroom) => {
        // The no-headroom trigger point is ceil(window*pct/100); with headroom it is that minus headroom (floored at 0).
        const trigger = Math.ceil((window * pct) / 100);
        const withHeadroom = Math.max(0, Math.ceil((window * pct - headroom * 100) / 100));
        expect(exceedsThresholdWithHeadroom(withHeadroom, window, pct, headroom)).toBe(true);
        if (withHeadroom > 0) expect(exceedsThresholdWithHeadroom(withHeadroom - 1, window, pct, headroom)).toBe(false);
        expect(exceedsThreshold(trigger, window, pct)).toBe(true);
        if (trigger > 0) expect(exceedsThreshold(trigger - 1, window, pct)).toBe(false);
      }),
    );
  });
});

describe('estimate_tokens (SPEC §4): UTF-8 bytes / 4, integer division', () => {
  it('counts bytes, not characters', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abc')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('hello world!')).toBe(3);
    expect(estimateTokens('中文')).toBe(1); // 6 bytes
    expect(estimateTokens('中文测试')).toBe(3); // 12 bytes
    expect(estimateTokens('😀')).toBe(1); // 4 bytes
    expect(estimateTokens('é')).toBe(0); // 2 bytes
  });

  it('765 tokens per low-resolution image', () => {
    expect(estimateImageTokens(0)).toBe(0);
    expect(estimateImageTokens(1)).toBe(765);
    expect(estimateImageTokens(3)).toBe(2295);
  });

  it('byte length equals the encoder for any string, lone surrogates included', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => {
      expect(utf8ByteLength(s)).toBe(Buffer.byteLength(s, 'utf8'));
    }));
  });

  it('is additive within one token: est(a)+est(b) <= est(a+b) <= est(a)+est(b)+1', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
      const sum = estimateTokens(a) + estimateTokens(b);
      const joined = estimateTokens(a + b);
      expect(joined).toBeGreaterThanOrEqual(sum);
      expect(joined).toBeLessThanOrEqual(sum + 1);
    }));
  });

  it('CJK is 3 bytes and emoji 4 bytes per character', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 500 }), (n) => {
      expect(estimateTokens('字'.repeat(n))).toBe(Math.floor((3 * n) / 4));
      expect(estimateTokens('🚀'.repeat(n))).toBe(n);
    }));
  });
});
