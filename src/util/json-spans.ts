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

/**
 * The members of an object by decoded key; a repeated key keeps its last occurrence, as
 * JSON.parse does. Kept as offsets into the text, four numbers a member in one list (the key's
 * literal without its quotes, then the value), looked up from the end by comparing the key in
 * place: an envelope has a dozen members and is asked for one or two, so no key string and no
 * span object is made for the members never asked for (a string and an object per member were
 * ~1.7 KB of allocation an event, with the raw input's index). A key written with escapes is
 * decoded once, when indexed. Past 16 members a lookup goes through a Map made once.
 */
export class Members {
  /** keyStart, keyEnd, valueStart, valueEnd of each member, in order. */
  private readonly at: number[] = [];
  /** Decoded keys of the members whose literal has escapes, by member number. */
  private escaped: Map<number, string> | undefined;
  private map: Map<string, MemberSpan> | undefined;

  constructor(private readonly text: string) {}

  /** Called by the scanner only, before the index is handed out. `decoded`: the key, when its literal has escapes. */
  add(keyStart: number, keyEnd: number, decoded: string | undefined, start: number, end: number): void {
    if (decoded !== undefined) (this.escaped ??= new Map()).set(this.at.length >>> 2, decoded);
    this.at.push(keyStart, keyEnd, start, end);
  }

  get(name: string): MemberSpan | undefined {
    const at = this.at;
    if (at.length > 64) return this.asMap().get(name);
    const escaped = this.escaped;
    for (let k = at.length - 4; k >= 0; k -= 4) {
      const keyStart = at[k] as number;
      if (escaped !== undefined && escaped.has(k >>> 2)) {
        if (escaped.get(k >>> 2) !== name) continue;
      } else if ((at[k + 1] as number) - keyStart !== name.length || !this.text.startsWith(name, keyStart)) continue;
      return { start: at[k + 2] as number, end: at[k + 3] as number };
    }
    return undefined;
  }

  /** Distinct keys. */
  get size(): number {
    return this.asMap().size;
  }

  /** Distinct keys, in the order of their last occurrences. */
  keys(): IterableIterator<string> {
    return this.asMap().keys();
  }

  private asMap(): Map<string, MemberSpan> {
    if (this.map === undefined) {
      const map = new Map<string, MemberSpan>();
      const at = this.at;
      for (let k = 0; k < at.length; k += 4) {
        const name = this.escaped?.get(k >>> 2) ?? this.text.slice(at[k] as number, at[k + 1] as number);
        map.delete(name); // the order of the last occurrence
        map.set(name, { start: at[k + 2] as number, end: at[k + 3] as number });
      }
      this.map = map;
    }
    return this.map;
  }
}

export interface ObjectIndex {
  readonly members: Members;
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

/** JSON's whitespace (a character code, or a byte of UTF-8 text). */
export function isJsonSpace(c: number): boolean {
  return c === Ch.Space || c === Ch.Tab || c === Ch.Lf || c === Ch.Cr;
}

function skipWhitespace(text: string, i: number): number {
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++;
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
  const end = skipTo(text, i);
  return { end, depth: skippedDepth };
}

/** The depth of the value skipTo last skipped (a result without an object per value). */
let skippedDepth = 0;

/** Index just past the value that starts at `i`; its depth is left in skippedDepth. */
function skipTo(text: string, i: number): number {
  skippedDepth = 0;
  const c = text.charCodeAt(i);
  if (c === Ch.Quote) return skipString(text, i);
  if (c !== Ch.OpenBrace && c !== Ch.OpenBracket) {
    // A number, true, false or null: runs to the next structural character or whitespace.
    let j = i;
    while (j < text.length) {
      const d = text.charCodeAt(j);
      if (d === Ch.Comma || d === Ch.CloseBrace || d === Ch.CloseBracket || d === Ch.Space ||
          d === Ch.Tab || d === Ch.Lf || d === Ch.Cr || d === Ch.Colon) break;
      j++;
    }
    return j;
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
      if (depth === 0) {
        skippedDepth = maxDepth;
        return j + 1;
      }
    }
    j++;
  }
  skippedDepth = maxDepth;
  return text.length;
}

/** True when text[from, to) holds a backslash (an escape). */
function hasBackslash(text: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (text.charCodeAt(k) === Ch.Backslash) return true;
  return false;
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
  const members = new Members(text);
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
    const keyStart = i + 1;
    const keyEnd = skipString(text, i);
    // A key cut short (no closing quote) is no key: JSON.parse reports it.
    if (keyEnd - 1 < keyStart || text.charCodeAt(keyEnd - 1) !== Ch.Quote) break;
    let decoded: string | undefined;
    if (hasBackslash(text, keyStart, keyEnd - 1)) {
      // A bad escape is undefined: JSON.parse reports it.
      decoded = decodeKey(text.slice(i, keyEnd));
      if (decoded === undefined) break;
    }
    i = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(i) !== Ch.Colon) break;
    i = skipWhitespace(text, i + 1);
    const valueEnd = skipTo(text, i);
    members.add(keyStart, keyEnd - 1, decoded, i, valueEnd);
    if (skippedDepth + 1 > maxDepth) maxDepth = skippedDepth + 1;
    i = valueEnd;
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
    const valueEnd = skipTo(text, i);
    if (valueEnd <= i) break; // malformed
    out.push({ start: i, end: valueEnd });
    i = valueEnd;
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
