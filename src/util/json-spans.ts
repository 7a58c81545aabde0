// Finds the raw text of JSON object members without parsing values, so a value can be stored
// verbatim: integers beyond 2^53, `-0`, unicode escapes and key order survive untouched.
//
// The scanner is iterative (no recursion), so a 10 000-level nested value cannot overflow the
// stack; it reports the deepest nesting it walked through so callers can refuse deep input.
// It does not validate (callers check with JSON.parse, the decoder after the depth check): on
// malformed text it stops early or at the end of the text, never throws and never loops forever.

export interface MemberSpan {
  /** Start offset (UTF-16 index) of the member's value. */
  readonly start: number;
  /** End offset (exclusive) of the member's value. */
  readonly end: number;
}

export interface ObjectIndex {
  /** Members by decoded key; a repeated key keeps its last occurrence, as JSON.parse does. */
  readonly members: Map<string, MemberSpan>;
  /** Deepest nesting inside the object, the object itself being depth 1. */
  readonly maxDepth: number;
}

const enum Ch {
  Quote = 34,
  Backslash = 92,
  OpenBrace = 123,
  CloseBrace = 125,
  OpenBracket = 91,
  CloseBracket = 93,
  Comma = 44,
  Colon = 58,
  Space = 32,
  Tab = 9,
  Lf = 10,
  Cr = 13,
}

function skipWhitespace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== Ch.Space && c !== Ch.Tab && c !== Ch.Lf && c !== Ch.Cr) break;
    i++;
  }
  return i;
}

/** Index just past the string literal that starts at `i` (which holds the opening quote). */
function skipString(text: string, i: number): number {
  // Jump from quote to quote (indexOf is native and fast on long strings); a quote preceded
  // by an odd number of backslashes is escaped.
  let from = i + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return text.length;
    let backslashes = 0;
    for (let k = q - 1; k > i && text.charCodeAt(k) === Ch.Backslash; k--) backslashes++;
    if ((backslashes & 1) === 0) return q + 1;
    from = q + 1;
  }
}

/**
 * Index just past the value that starts at `i`, and the deepest nesting met inside it
 * (a scalar is depth 0, `[]` is depth 1).
 */
export function skipValue(text: string, i: number): { end: number; depth: number } {
  const c = text.charCodeAt(i);
  if (c === Ch.Quote) return { end: skipString(text, i), depth: 0 };
  if (c !== Ch.OpenBrace && c !== Ch.OpenBracket) {
    // A number, true, false or null: runs to the next structural character or whitespace.
    let j = i;
    while (j < text.length) {
      const d = text.charCodeAt(j);
      if (d === Ch.Comma || d === Ch.CloseBrace || d === Ch.CloseBracket || d === Ch.Space ||
          d === Ch.Tab || d === Ch.Lf || d === Ch.Cr || d === Ch.Colon) break;
      j++;
    }
    return { end: j, depth: 0 };
  }
  let depth = 0;
  let maxDepth = 0;
  let j = i;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === Ch.Quote) {
      j = skipString(text, j);
      continue;
    }
    if (d === Ch.OpenBrace || d === Ch.OpenBracket) {
      depth++;
      if (depth > maxDepth) maxDepth = depth;
    } else if (d === Ch.CloseBrace || d === Ch.CloseBracket) {
      depth--;
      if (depth === 0) return { end: j + 1, depth: maxDepth };
    }
    j++;
  }
  return { end: text.length, depth: maxDepth };
}

/** A key's value from its literal with escapes; undefined when the literal is no JSON string. */
function decodeKey(rawKey: string): string | undefined {
  try {
    return JSON.parse(rawKey) as string;
  } catch {
    return undefined;
  }
}

/**
 * Indexes the members of the JSON object starting at `start` (leading whitespace allowed).
 * Returns undefined when the value there is not an object.
 */
export function indexObject(text: string, start = 0, end = text.length): ObjectIndex | undefined {
  let i = skipWhitespace(text, start);
  if (text.charCodeAt(i) !== Ch.OpenBrace) return undefined;
  const members = new Map<string, MemberSpan>();
  let maxDepth = 1;
  i++;
  while (i < end) {
    i = skipWhitespace(text, i);
    const c = text.charCodeAt(i);
    if (c === Ch.CloseBrace) break;
    if (c === Ch.Comma) {
      i++;
      continue;
    }
    if (c !== Ch.Quote) break; // malformed; JSON.parse reports it
    const keyEnd = skipString(text, i);
    const rawKey = text.slice(i, keyEnd);
    const key = rawKey.includes('\\') ? decodeKey(rawKey) : rawKey.slice(1, -1);
    if (key === undefined) break; // a bad escape (or a key cut short): JSON.parse reports it
    i = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(i) !== Ch.Colon) break;
    i = skipWhitespace(text, i + 1);
    const value = skipValue(text, i);
    members.delete(key); // keep insertion order of the last occurrence
    members.set(key, { start: i, end: value.end });
    if (value.depth + 1 > maxDepth) maxDepth = value.depth + 1;
    i = value.end;
  }
  return { members, maxDepth };
}

/** Spans of the elements of the JSON array starting at `start`, or undefined when not an array. */
export function indexArray(text: string, start = 0): MemberSpan[] | undefined {
  let i = skipWhitespace(text, start);
  if (text.charCodeAt(i) !== Ch.OpenBracket) return undefined;
  const out: MemberSpan[] = [];
  i++;
  while (i < text.length) {
    i = skipWhitespace(text, i);
    const c = text.charCodeAt(i);
    if (c === Ch.CloseBracket) break;
    if (c === Ch.Comma) {
      i++;
      continue;
    }
    const value = skipValue(text, i);
    if (value.end <= i) break; // malformed
    out.push({ start: i, end: value.end });
    i = value.end;
  }
  return out;
}

/**
 * The span of the value at a path of object keys and array indexes, e.g.
 * ['message', 'content', 2, 'input']; undefined when any step is missing.
 */
export function findSpan(text: string, path: readonly (string | number)[], start = 0): MemberSpan | undefined {
  let span: MemberSpan = { start: skipWhitespace(text, start), end: text.length };
  for (const step of path) {
    if (typeof step === 'number') {
      const next = indexArray(text, span.start)?.[step];
      if (!next) return undefined;
      span = next;
    } else {
      const next = indexObject(text, span.start)?.members.get(step);
      if (!next) return undefined;
      span = next;
    }
  }
  if (span.end === text.length && path.length === 0) span = { start: span.start, end: skipValue(text, span.start).end };
  return span;
}
