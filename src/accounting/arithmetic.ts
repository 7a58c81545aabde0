// Token estimation and threshold arithmetic, exactly as SPEC §4-§5. No imports of ours: the
// functions fetch nothing and do not know whether a figure is estimated or observed; the
// caller passes numbers and labels them.
//
// Integers are u64 as in the source design: multiplications saturate at 2^64 - 1 and the
// subtraction saturates at 0. BigInt carries the values, so nothing rounds past 2^53.

export const U64_MAX = (1n << 64n) - 1n;
/** A low-resolution image counts a fixed 765 tokens (SPEC §4). */
export const IMAGE_TOKENS_LOW_RES = 765;
export const BYTES_PER_TOKEN = 4;

export type U64 = number | bigint;

function toU64(name: string, value: U64): bigint {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new RangeError(`${name} must be an integer (a number up to 2^53 - 1, or a bigint), got ${value}`);
  }
  const v = BigInt(value);
  if (v < 0n || v > U64_MAX) throw new RangeError(`${name} must be within u64 (0 ..= 2^64 - 1), got ${v}`);
  return v;
}

function toU8(name: string, value: number): bigint {
  if (!Number.isInteger(value) || value < 0 || value > 255) throw new RangeError(`${name} must be within u8 (0 ..= 255), got ${value}`);
  return BigInt(value);
}

export function saturatingMul(a: bigint, b: bigint): bigint {
  const p = a * b;
  return p > U64_MAX ? U64_MAX : p;
}

/** Sum of u64 figures, saturating at 2^64 - 1 (figures of one request can add up beyond it). */
export function saturatingAdd(...values: readonly bigint[]): bigint {
  let sum = 0n;
  for (const v of values) sum += v;
  return sum > U64_MAX ? U64_MAX : sum;
}

export function saturatingSub(a: bigint, b: bigint): bigint {
  return a > b ? a - b : 0n;
}

/** UTF-8 byte length of a string, counted without allocating. */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3; // a lone surrogate encodes as U+FFFD, 3 bytes
    } else bytes += 3;
  }
  return bytes;
}

/** estimate_tokens: UTF-8 byte length divided by 4, integer division (SPEC §4). */
export function estimateTokens(text: string): number {
  return Math.floor(utf8ByteLength(text) / BYTES_PER_TOKEN);
}

/** The same estimate from a byte count already known. */
export function estimateTokensFromBytes(bytes: number): number {
  return Math.floor(bytes / BYTES_PER_TOKEN);
}

/** 765 tokens per low-resolution image (SPEC §4). */
export function estimateImageTokens(images: number): number {
  return images * IMAGE_TOKENS_LOW_RES;
}

/** usage_percentage: total == 0 ? 0 : min(100, used / total * 100), a float (SPEC §5). */
export function usagePercentage(used: U64, total: U64): number {
  const u = toU64('used', used);
  const t = toU64('total', total);
  if (t === 0n) return 0;
  return Math.min(100, (Number(u) / Number(t)) * 100);
}

/** exceeds_threshold: window == 0 ? false : used*100 >= window*pct, saturating (SPEC §5). */
export function exceedsThreshold(used: U64, contextWindow: U64, thresholdPercent: number): boolean {
  const w = toU64('contextWindow', contextWindow);
  if (w === 0n) return false;
  return saturatingMul(toU64('used', used), 100n) >= saturatingMul(w, toU8('thresholdPercent', thresholdPercent));
}

/**
 * exceeds_threshold_with_headroom: window == 0 ? false :
 * used*100 >= saturating_sub(window*pct, headroom*100) (SPEC §5). Headroom moves the trigger
 * point earlier by exactly the headroom.
 */
export function exceedsThresholdWithHeadroom(used: U64, contextWindow: U64, thresholdPercent: number, headroom: U64): boolean {
  const w = toU64('contextWindow', contextWindow);
  if (w === 0n) return false;
  const right = saturatingSub(saturatingMul(w, toU8('thresholdPercent', thresholdPercent)), saturatingMul(toU64('headroom', headroom), 100n));
  return saturatingMul(toU64('used', used), 100n) >= right;
}
