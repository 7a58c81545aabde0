// Items cut into consecutive batches at the given points (taken modulo the length, sorted,
// repeated ones once): how the derivation tests split one stream into any batching.
export function cut<T>(xs: readonly T[], points: readonly number[]): T[][] {
  const at = [...new Set(points.map((p) => p % (xs.length + 1)))].sort((a, b) => a - b);
  const out: T[][] = [];
  let start = 0;
  for (const p of [...at, xs.length]) {
    if (p > start) out.push(xs.slice(start, p));
    start = Math.max(start, p);
  }
  return out;
}
