// JSON paths of a parsed value, for tests that mutate records at a member or an element.

export type JsonPath = readonly (string | number)[];

/** Every member and element path of a JSON value, depth first (the root excluded), to maxDepth levels. */
export function pathsOf(value: unknown, maxDepth: number, prefix: JsonPath = [], out: JsonPath[] = []): JsonPath[] {
  if (prefix.length >= maxDepth) return out;
  if (Array.isArray(value)) {
    value.forEach((v: unknown, i) => {
      out.push([...prefix, i]);
      pathsOf(v, maxDepth, [...prefix, i], out);
    });
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push([...prefix, k]);
      pathsOf(v, maxDepth, [...prefix, k], out);
    }
  }
  return out;
}
