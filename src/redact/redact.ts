// Replaces secrets (REDACTION_RULES) with a marker that keeps the kind and a short hash,
// [REDACTED:github_token:3f9a], and leaves every other byte as it was.
//
// The rules run on decoded values: in JSON text each string is read (its escapes decoded, so
// `\u0067hp_…` is `ghp_…` and `https:\/\/` is `https://`), the rules run on the value, and each
// secret found is replaced in the JSON text over exactly the characters (escapes included) that
// encode it. So JSON stays valid JSON with the same key order, escapes and numbers outside a
// secret's span, and whatever is decoded from it (the projection's columns) holds the marker,
// never the secret. A string's field name is its context: "Authorization": "Basic …",
// "X-Api-Key": "…", "password": "…" are judged by their names (rules.ts judgeNamed). An array of
// strings (an argv) is also read as one command line, so ["curl","-u","user:pw"] is
// `curl -u user:pw`.
import { sha256Hex } from '../util/hash.ts';
import { isJsonSpace } from '../util/json-spans.ts';
import { CONTEXT_KINDS, isPlaceholderValue, judgeNamed, kindOfNamed, NAME_WORD, REDACTION_RULES, secretStrength, UNQUOTED_VALUE_CAP, type RedactionRule } from './rules.ts';

export interface RedactedText {
  /** The text with every secret replaced (the same string when nothing was). */
  readonly text: string;
  /** Secrets replaced. */
  readonly count: number;
}

/** A secret found: [start, end) in the text scanned, and its kind. */
interface Span {
  start: number;
  end: number;
  kind: string;
  order: number;
}

interface CompiledRule {
  readonly rule: RedactionRule;
  readonly regex: RegExp;
  readonly order: number;
  /** The rule's literals (named rules: tested before the rule runs). */
  readonly literal: RegExp;
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const COMPILED: readonly CompiledRule[] = REDACTION_RULES.map((rule, order) => ({
  rule,
  order,
  regex: new RegExp(rule.pattern, rule.caseInsensitive ? 'gid' : 'gd'),
  literal: new RegExp(rule.literals.map(escapeRe).join('|'), rule.caseInsensitive ? 'i' : ''),
}));
const SHAPE_RULES = COMPILED.filter((c) => !CONTEXT_KINDS.has(c.rule.kind));
const NAMED_RULES = COMPILED.filter((c) => CONTEXT_KINDS.has(c.rule.kind));

/**
 * The gate: where in a text a rule could match, found in one pass over its characters, so a
 * text without such a place costs that pass and nothing else.
 * - A vendor shape's literal starts a token (the rules assert no letter or digit before it):
 *   after a word boundary, after `_` (`mcp__ghp_…`) or after an escape in JSON text (`\nghp_…`).
 * - Four literals sit inside a token (`T3BlbkFJ`, `Q~`, `:AA`, `-us1`).
 * - The name-based and command-line rules need one of a few words (any case) or a short flag.
 * A table by a literal's first two characters (c0 << 7 | c1) names the rules; the positions
 * select the JSON strings worth reading. (The pass replaced five expressions, one a trie of
 * ~150 literals: redaction cost 29 % of decode with them; see docs/performance.md.)
 */
interface Entry {
  readonly literal: string;
  readonly rules: CompiledRule[];
}
const INFIX_LITERALS = new Set(['T3BlbkFJ', 'Q~', ':AA', '-us']);
const TABLE: (Entry[] | undefined)[] = new Array<undefined>(128 * 128).fill(undefined);
const keyAt = (text: string, i: number): number => ((text.charCodeAt(i) & 127) << 7) | (text.charCodeAt(i + 1) & 127);
const tokenLiterals: string[] = [];
for (const c of SHAPE_RULES) {
  for (const l of c.rule.literals) {
    if (!INFIX_LITERALS.has(l)) {
      if (!/^[A-Za-z0-9]/.test(l)) throw new Error(`redact: a token literal must start with a letter or digit: ${l}`);
      tokenLiterals.push(l);
    }
    const list = (TABLE[keyAt(l, 0)] ??= []);
    let e = list.find((x) => x.literal === l);
    if (e === undefined) list.push((e = { literal: l, rules: [] }));
    if (!e.rules.includes(c)) e.rules.push(c);
  }
}

/**
 * The gate's one pass: a table by a place's first two characters (c0 << 7 | c1) says what may
 * start there, so most places cost a load and a test. What each bit needs is then checked where
 * it is set; the rules are the expressions in the comments (test/redact/gate.test.ts holds the
 * pass equal to them).
 */
const TOKEN_BIT = 1; // \b then a token literal (a literal starts with a letter or digit)
const INFIX_BIT = 2; // T3BlbkFJ | Q~ | :AA | -us[0-9]
const NAMED_BIT = 4; // secret | token | pass | pw | credential | key | auth | bearer (any case) | :// with an @ after it
const HIDING_BIT = 8; // \u | \/ (a JSON escape that can hide a literal)
const CLI_BIT = 16; // -[pau] after [\s"'[,] | --user
const BITS = new Uint8Array(128 * 128);
const key2 = (s: string): number => ((s.charCodeAt(0) & 127) << 7) | (s.charCodeAt(1) & 127);
for (const l of tokenLiterals) BITS[key2(l)]! |= TOKEN_BIT;
for (const l of ['T3', 'Q~', ':A', '-u']) BITS[key2(l)]! |= INFIX_BIT;
/** What the name-based and command-line rules need one of (any case, ASCII letters only). */
const NAMED_WORDS = ['secret', 'token', 'pass', 'pw', 'credential', 'key', 'auth', 'bearer', '://'];
const NAMED_BY_KEY = new Map<number, string[]>();
for (const w of NAMED_WORDS) {
  const a = w.charAt(0);
  const b = w.charAt(1);
  for (const x of new Set([a, a.toUpperCase()]))
    for (const y of new Set([b, b.toUpperCase()])) {
      const k = key2(x + y);
      BITS[k]! |= NAMED_BIT;
      const list = NAMED_BY_KEY.get(k) ?? [];
      list.push(w);
      NAMED_BY_KEY.set(k, list);
    }
}
for (const l of ['\\u', '\\/']) BITS[key2(l)]! |= HIDING_BIT;
for (const l of ['-p', '-a', '-u', '--']) BITS[key2(l)]! |= CLI_BIT;

/** A character of \w (an expression's word boundary is between one and a character that is not). */
function isWord(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}
/** A character of an expression's \s. */
function isReSpace(c: number): boolean {
  return (
    (c >= 9 && c <= 13) || c === 32 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}
/** A token literal (not one of the infix four) starts at i and ends by `to`. */
function tokenLiteralAt(text: string, i: number, to: number, k: number): boolean {
  const list = TABLE[k];
  if (list === undefined) return false;
  for (const e of list) if (!INFIX_LITERALS.has(e.literal) && i + e.literal.length <= to && text.startsWith(e.literal, i)) return true;
  return false;
}
/** `word` (lower case) at i and ending by `to`, ASCII letters in any case. */
function wordAt(text: string, i: number, to: number, word: string): boolean {
  if (i + word.length > to) return false;
  for (let j = 0; j < word.length; j++) {
    let c = text.charCodeAt(i + j);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== word.charCodeAt(j)) return false;
  }
  return true;
}
function infixAt(text: string, i: number, to: number, c0: number): boolean {
  switch (c0) {
    case 84 /* T */:
      return i + 8 <= to && text.startsWith('T3BlbkFJ', i);
    case 81 /* Q */:
      return true; // Q~
    case 58 /* : */:
      return i + 2 < to && text.charCodeAt(i + 2) === 65; // :AA
    default: {
      if (i + 3 >= to) return false;
      const d = text.charCodeAt(i + 2);
      return d === 115 /* -us */ && text.charCodeAt(i + 3) >= 48 && text.charCodeAt(i + 3) <= 57;
    }
  }
}

/** What the gate found in a text. */
interface Gate {
  /** The shape rules whose literals the text holds. */
  shapes: Set<CompiledRule> | undefined;
  /** Where a literal or a name word starts, in order. */
  readonly at: number[];
  /** The shape rules of each place in `at` (null: a name word), in the order found. */
  readonly what: { at: number; rules: readonly CompiledRule[] | null }[];
  /** A name word is there. */
  named: boolean;
  /** A JSON escape that can hide a literal. */
  hiding: boolean;
}
const NOTHING: Gate = Object.freeze({ shapes: undefined, at: [], what: [], named: false, hiding: false });

/** The rules whose literals start at `i` and end by `to` (places counted from `from`). */
function rulesAt(text: string, i: number, from: number, to: number, g: Gate): void {
  const list = TABLE[keyAt(text, i)];
  if (list === undefined) return;
  for (const e of list) {
    if (i + e.literal.length <= to && text.startsWith(e.literal, i)) {
      for (const r of e.rules) (g.shapes ??= new Set()).add(r);
      g.at.push(i - from);
      g.what.push({ at: i - from, rules: e.rules });
    }
  }
}

function nameWordAt(g: Gate, i: number): void {
  g.named = true;
  g.at.push(i);
  g.what.push({ at: i, rules: null });
}

/** The gate of the part [from, to) of a text the gate was run on (what was found there). */
function gateOfPart(g: Gate, from: number, to: number): Gate {
  let shapes: Set<CompiledRule> | undefined;
  let named = false;
  for (const w of g.what) {
    if (w.at < from || w.at >= to) continue;
    if (w.rules === null) named = true;
    else for (const r of w.rules) (shapes ??= new Set()).add(r);
  }
  return { shapes, at: [], what: [], named, hiding: false };
}

/**
 * Where a text may hold a secret, and whether escapes may hide more: one pass over its
 * characters. `from` and `to` read a part of a text as if it were the whole (places counted from
 * `from`): decode reads an event's input in the line it came in, not in a copy.
 */
function gate(text: string, from = 0, to = text.length): Gate {
  let g: Gate | undefined;
  const n = to - 1;
  let prev2 = -1;
  let prev = -1;
  let c1 = from < to ? text.charCodeAt(from) : 0;
  for (let i = from; i < n; i++) {
    const c0 = c1;
    c1 = text.charCodeAt(i + 1);
    const k = ((c0 & 127) << 7) | (c1 & 127);
    // Every place's first two characters are ASCII: a wider one only aliases a key (& 127).
    const bits = (c0 | c1) < 128 ? (BITS[k] as number) : 0;
    if (bits !== 0) {
      if (bits & TOKEN_BIT) {
        const boundary = prev === -1 || !isWord(prev);
        const glued = prev === 95 /* _ */ || (prev2 === 92 /* \ */ && (prev === 110 || prev === 114 || prev === 116 || prev === 98 || prev === 102)); /* n r t b f */
        if ((boundary || glued) && tokenLiteralAt(text, i, to, k)) {
          g ??= { shapes: undefined, at: [], what: [], named: false, hiding: false };
          rulesAt(text, i, from, to, g);
        }
      }
      if (bits & INFIX_BIT && infixAt(text, i, to, c0)) {
        g ??= { shapes: undefined, at: [], what: [], named: false, hiding: false };
        rulesAt(text, i, from, to, g);
      }
      if (bits & NAMED_BIT) {
        for (const w of NAMED_BY_KEY.get(k) as string[])
          // `://` serves the URL password rule only, which needs an @ after it.
          if (wordAt(text, i, to, w) && (w !== '://' || atBefore(text, i + 3, to))) {
            nameWordAt((g ??= { shapes: undefined, at: [], what: [], named: false, hiding: false }), i - from);
            break;
          }
      }
      if (bits & HIDING_BIT) (g ??= { shapes: undefined, at: [], what: [], named: false, hiding: false }).hiding = true;
      if (bits & CLI_BIT) {
        const cli = c1 === 45 /* -- */ ? i + 6 <= to && text.startsWith('--user', i) : prev !== -1 && (isReSpace(prev) || prev === 34 || prev === 39 || prev === 91 || prev === 44);
        if (cli) nameWordAt((g ??= { shapes: undefined, at: [], what: [], named: false, hiding: false }), i - from);
      }
    }
    prev2 = prev;
    prev = c0;
  }
  if (g === undefined) return NOTHING;
  if (g.at.length > 1) g.at.sort((a, b) => a - b);
  return g;
}

/** An @ in [from, to). */
function atBefore(text: string, from: number, to: number): boolean {
  const at = text.indexOf('@', from);
  return at !== -1 && at < to;
}

/** The gate's findings, for its test: the places, the shape rules' kinds, and the two flags (of text[from, to) when given). */
export function gateFindings(text: string, from?: number, to?: number): { at: number[]; kinds: string[]; named: boolean; hiding: boolean } {
  const g = gate(text, from, to);
  return { at: [...new Set(g.at)], kinds: [...(g.shapes ?? [])].map((c) => `${c.rule.kind}#${c.order}`).sort(), named: g.named, hiding: g.hiding };
}

/** The marker that replaces a secret: its kind and the first 4 hex digits of its SHA-256 (UTF-8). */
export function redactionMarker(kind: string, secret: string): string {
  return `[REDACTED:${kind}:${sha256Hex(secret, 4)}]`;
}

const VALUE_GROUPS = ['s', 's2', 's3', 's4', 's5', 's6', 's7', 's8'] as const;
/** What ends an unquoted value: white space or a quote (rules.ts VALUE). */
const UNQUOTED_END = /[\s'"`]/;
const QUOTED_GROUPS = new Set(['s', 's2', 's4', 's5', 's6', 's8']);

function runRule(c: CompiledRule, text: string, base: number, out: Span[]): void {
  const { rule, regex } = c;
  regex.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = regex.exec(text)) !== null) {
    if (m[0] === '') {
      regex.lastIndex = m.index + 1;
      continue;
    }
    let start = m.index;
    let end = m.index + m[0].length;
    let quoted = false;
    const groups = m.groups;
    if (groups !== undefined) {
      const idx = m.indices?.groups;
      for (const g of VALUE_GROUPS) {
        const at = idx?.[g];
        if (at !== undefined) {
          [start, end] = at;
          quoted = QUOTED_GROUPS.has(g);
          break;
        }
      }
    }
    // An unquoted value ends before trailing punctuation (`password: hunter2,` in a flow map).
    if (!quoted && rule.caseInsensitive === true) while (end > start + 1 && (text.charCodeAt(end - 1) === 44 || text.charCodeAt(end - 1) === 59)) end--;
    const secret = text.slice(start, end);
    let kind = rule.kind;
    let keep = secret === '' || secret.startsWith('[REDACTED:');
    if (!keep && rule.named === true) {
      const name = groups?.['n'] ?? groups?.['n2'] ?? '';
      // A flag's name is a word (--api-key, -password), not a glued value (mysql -pS3cr3tPass).
      if (rule.kind === 'secret_flag' && !/^[a-zA-Z]+(?:[-_][a-zA-Z0-9]+)*$/.test(name)) {
        regex.lastIndex = m.index + 1;
        continue;
      }
      const spaced = rule.kind === 'secret_assignment' && /[ \t](?:=|:=|=>)|(?:=|:=|=>)[ \t]/.test(m[0]);
      keep = (rule.kind === 'secret_flag' && secret.startsWith('-')) || !judgeNamed(name, secret, { quoted, spaced, next: text.charCodeAt(end), code: rule.kind !== 'secret_flag', colon: groups?.['n2'] !== undefined });
      kind = kindOfNamed(kind, name);
    } else if (!keep && rule.caseInsensitive === true) {
      keep = isPlaceholderValue(secret) || (rule.kind === 'bearer_token' && !looksRandom(secret));
    }
    if (keep) {
      regex.lastIndex = m.index + 1;
      continue;
    }
    // An unquoted value matched to its cap (rules.ts UNQUOTED_VALUE_CAP) goes on to its token's end.
    if (!quoted && end - start === UNQUOTED_VALUE_CAP) {
      while (end < text.length && !UNQUOTED_END.test(text[end] as string)) end++;
    }
    out.push({ start: base + start, end: base + end, kind, order: c.order });
    regex.lastIndex = Math.max(end, m.index + 1);
  }
}

/** A bearer credential outside a header: not a word or an identifier (`Bearer authentication`). */
function looksRandom(value: string): boolean {
  return /[0-9]/.test(value) || /[A-Z].*[a-z].*[A-Z]|[a-z].*[A-Z].*[a-z].*[A-Z]/.test(value) || value.length >= 24;
}

/** Secrets in a decoded text (no JSON reading): the shapes whose literals it holds, then the named rules. */
function findInText(text: string, base: number, out: Span[], known?: Gate): void {
  if (text.length < 6) return;
  const g = known ?? gate(text);
  const wanted = g.shapes;
  if (wanted !== undefined) for (const c of SHAPE_RULES) if (wanted.has(c)) runRule(c, text, base, out);
  // A gate of the text itself knows its name places; one of a part of a JSON text (gateOfPart) does not.
  if (g.named) runNamedRules(text, base, out, true, known === undefined ? g : undefined);
}

/**
 * The rules that judge a name (`named`: secret_assignment, secret_field, secret_flag): neither
 * their matches nor what their lookarounds read cross a line (their characters are names,
 * quotes, `[ \t]`, operators and values that stop at `\r` or `\n`), and each match holds one of
 * NAME_WORD's words in that line (its lookbehind asserts it). So on a text of many lines they
 * find the same secrets run on the lines that hold such a word (the gate's name places), each
 * with its newline: before a line's first character the expression reads a newline or nothing,
 * which its lookbehinds treat alike, and the newline after it is what ends a value and what the
 * name's judge is told follows it. Run over whole texts they cost ~17 % of a Codex import.
 */
const LINE_RULES: ReadonlySet<CompiledRule> = new Set(NAMED_RULES.filter((c) => c.rule.named === true));
/** Shorter texts are searched whole (as cheap as finding their lines). */
const LINES_FROM_CHARS = 512;

/**
 * The named rules whose literals a text holds, run on it (the line rules on its lines with a name
 * word when `byLines`; `g`: the text's own gate, if it was run).
 */
function runNamedRules(text: string, base: number, out: Span[], byLines: boolean, g?: Gate): void {
  let lines: number[] | undefined;
  for (const c of NAMED_RULES) {
    if (!c.literal.test(text)) continue;
    if (!byLines || !LINE_RULES.has(c) || text.length < LINES_FROM_CHARS) {
      runRule(c, text, base, out);
      continue;
    }
    lines ??= g === undefined ? linesWithNameWord(text) : nameWordLines(text, g);
    for (let i = 0; i < lines.length; i += 2) {
      const from = lines[i] as number;
      const to = lines[i + 1] as number;
      runRule(c, from === 0 && to === text.length ? text : text.slice(from, to), base + from, out);
    }
  }
}

/**
 * Adds the line of `text` that holds place `at`, with the newline that ends it, to `out` ([from,
 * to) pairs in order, joined where they touch); gives where that line ends.
 */
function addLineAt(text: string, at: number, out: number[]): number {
  const from = text.lastIndexOf('\n', at - 1) + 1;
  const nl = text.indexOf('\n', at);
  const to = nl === -1 ? text.length : nl + 1;
  if (out.length > 0 && out[out.length - 1] === from) out[out.length - 1] = to;
  else out.push(from, to);
  return to;
}

/**
 * The lines of a text that hold a place the gate names (a name word, or a short flag: a superset
 * of NAME_WORD's words), each with the newline that ends it, joined where they touch: [from, to)
 * pairs in order.
 */
function nameWordLines(text: string, g: Gate): number[] {
  const out: number[] = [];
  for (const w of g.what) {
    if (w.rules !== null) continue;
    if (out.length > 0 && w.at < (out[out.length - 1] as number)) continue; // in the last line taken
    addLineAt(text, w.at, out);
  }
  return out;
}

/** NAME_WORD as the line rules read it (their lookbehinds: case-insensitive, no `u`). */
const NAME_WORD_SEARCH = new RegExp(NAME_WORD, 'gi');

/**
 * The lines of a text that hold one of NAME_WORD's words (as nameWordLines, without a gate of the
 * text: a text the gate was not run on is searched for the words alone, which costs about half
 * a gate's pass).
 */
function linesWithNameWord(text: string): number[] {
  const out: number[] = [];
  const re = NAME_WORD_SEARCH;
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const to = addLineAt(text, m.index, out);
    if (to === text.length) break;
    re.lastIndex = to; // the rest of the line is in
  }
  return out;
}

/**
 * The spans the named rules find in a text, searched whole or on its lines with a name word, the
 * lines found by the gate's name places (`viaGate`, as for a text the gate ran on) or by
 * NAME_WORD's expression (all three must agree; tests).
 */
export function namedRuleSpans(text: string, byLines: boolean, viaGate = false): { start: number; end: number; kind: string }[] {
  const out: Span[] = [];
  runNamedRules(text, 0, out, byLines, viaGate ? gate(text) : undefined);
  return out.map((s) => ({ start: s.start, end: s.end, kind: s.kind }));
}

const AUTH_VALUE = /^[ \t]*(?:(?:bearer|basic|token|digest|bot|negotiate|ntlm|api-?key|sso-key|hmac|aws4-hmac-sha256)[ \t]+)?/i;
const ORDER_FIELD = REDACTION_RULES.length;

/** A JSON field's value judged by its field's name ("Authorization", "X-Api-Key", "password"). */
function findInField(key: string, value: string, base: number, out: Span[]): void {
  const lower = key.toLowerCase();
  if (lower === 'authorization' || lower === 'proxy-authorization') {
    const scheme = AUTH_VALUE.exec(value)?.[0].length ?? 0;
    const cred = value.slice(scheme).trimEnd();
    if (cred !== '' && !isPlaceholderValue(cred)) out.push({ start: base + scheme, end: base + scheme + cred.length, kind: 'auth_header', order: ORDER_FIELD });
    return;
  }
  if (secretStrength(key) > 0 && judgeNamed(key, value, { quoted: true })) out.push({ start: base, end: base + value.length, kind: kindOfNamed('secret_field', key), order: ORDER_FIELD });
}

/** A JSON string's content decoded, with the offset in the content of each decoded character (and of its end). */
function decodeWithOffsets(content: string): { text: string; at: number[] } {
  let text = '';
  const at: number[] = [];
  let i = 0;
  while (i < content.length) {
    at.push(i);
    const c = content[i] as string;
    if (c !== '\\' || i + 1 >= content.length) {
      text += c;
      i++;
      continue;
    }
    const e = content[i + 1] as string;
    if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(content.slice(i + 2, i + 6))) {
      text += String.fromCharCode(parseInt(content.slice(i + 2, i + 6), 16));
      i += 6;
      continue;
    }
    text += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e === 'b' ? '\b' : e === 'f' ? '\f' : e;
    i += 2;
  }
  at.push(i);
  return { text, at };
}

/** A JSON string's content decoded (lenient: text that is not JSON is read as well as it can be). */
function decodeContent(content: string): string {
  if (!content.includes('\\')) return content;
  try {
    return JSON.parse(`"${content}"`) as string;
  } catch {
    return decodeWithOffsets(content).text;
  }
}

/** Spans found in a decoded string moved to the JSON text: over the characters that encode them. */
function mapSpans(found: Span[], content: string, contentStart: number, out: Span[]): void {
  if (found.length === 0) return;
  if (!content.includes('\\')) {
    for (const s of found) out.push({ ...s, start: contentStart + s.start, end: contentStart + s.end });
    return;
  }
  const { at } = decodeWithOffsets(content);
  for (const s of found) out.push({ ...s, start: contentStart + (at[s.start] as number), end: contentStart + (at[s.end] as number) });
}

/** A string of JSON text (lenient: the last one may be cut off). */
const STRING = /"((?:[^"\\]|\\[\s\S])*)(?:"|$)/g;

interface ArgvItem {
  readonly value: string;
  readonly content: string;
  readonly contentStart: number;
}

/**
 * Secrets in the strings of JSON text (lenient: text that is not JSON has its quoted strings
 * read as if it were): each string decoded, its field name as context, each array of strings
 * also read as one command line.
 */
function findInJson(text: string, out: Span[], g: Gate): void {
  STRING.lastIndex = 0;
  let m: RegExpExecArray | null;
  let keyFor = -1;
  let key = '';
  let keyHit = false;
  let argv: ArgvItem[] = [];
  let argvHit = false;
  let argvEnd = -1;
  // Without an escape that hides a literal, a string holding no place the gate found holds no
  // secret (unless it is the value of a key that did): read only those.
  const every = g.hiding;
  const at = g.at;
  let next = 0;
  while ((m = STRING.exec(text)) !== null) {
    const end = m.index + m[0].length;
    while (next < at.length && (at[next] as number) < m.index) next++;
    const hit = every || (next < at.length && (at[next] as number) < end);
    let k = end;
    while (k < text.length && isJsonSpace(text.charCodeAt(k))) k++;
    const isKey = text.charCodeAt(k) === 58; /* : */
    if (isKey) {
      k++;
      while (k < text.length && isJsonSpace(text.charCodeAt(k))) k++;
      keyFor = k;
      keyHit = hit;
      key = '';
      if (!hit) continue;
      const content = m[1] as string;
      key = decodeContent(content);
      const found: Span[] = [];
      findInText(key, 0, found, every ? undefined : gateOfPart(g, m.index, end));
      mapSpans(found, content, m.index + 1, out);
      continue;
    }
    const valued = keyFor === m.index && keyHit;
    // An array of strings: its items read together as one command line.
    let p = m.index - 1;
    while (p >= 0 && isJsonSpace(text.charCodeAt(p))) p--;
    const before = text.charCodeAt(p);
    const continues = before === 44 /* , */ && argv.length > 0 && onlyCommaBetween(text, argvEnd, m.index);
    if (!continues) {
      if (argvHit) findInArgv(argv, out);
      argv = [];
      argvHit = false;
    }
    argvEnd = end;
    const inArray = continues || before === 91; /* [ */
    if (!hit && !valued && !inArray) continue;
    const content = m[1] as string;
    const contentStart = m.index + 1;
    const value = decodeContent(content);
    if (inArray) {
      argv.push({ value, content, contentStart });
      argvHit ||= hit;
    }
    if (!hit && !valued) continue;
    const found: Span[] = [];
    if (valued && key !== '') findInField(key, value, 0, found);
    if (hit) findInText(value, 0, found, every ? undefined : gateOfPart(g, m.index, end));
    mapSpans(found, content, contentStart, out);
    if (inArray && hit) findInArgvItem(value, content, contentStart, out);
  }
  if (argvHit) findInArgv(argv, out);
}

function onlyCommaBetween(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c !== 44 && !isJsonSpace(c)) return false;
  }
  return true;
}

const ASSIGNMENT_ITEM = /^([A-Za-z_][A-Za-z0-9_.\-]{0,80})=([\s\S]+)$/;

/** An array item that is a whole assignment (`env PASSWORD=a b c`): its value is the rest of the item. */
function findInArgvItem(value: string, content: string, contentStart: number, out: Span[]): void {
  const m = ASSIGNMENT_ITEM.exec(value);
  if (m === null) return;
  const name = m[1] as string;
  const v = m[2] as string;
  if (!judgeNamed(name, v, { quoted: true })) return;
  mapSpans([{ start: name.length + 1, end: value.length, kind: kindOfNamed('secret_assignment', name), order: ORDER_FIELD }], content, contentStart, out);
}

/** An argv read as one command line (items joined by spaces); what is found is moved back to its items. */
function findInArgv(argv: readonly ArgvItem[], out: Span[]): void {
  if (argv.length < 2) return;
  const line = argv.map((a) => a.value).join(' ');
  // No gate first: each named rule tests its literals before it runs (what the gate's name
  // places would have allowed), and the line rules run on the lines that hold a name word.
  const found: Span[] = [];
  runNamedRules(line, 0, found, true);
  if (found.length === 0) return;
  let at = 0;
  for (const a of argv) {
    const from = at;
    const to = at + a.value.length;
    const inItem = found.filter((s) => s.start < to && s.end > from).map((s) => ({ ...s, start: Math.max(s.start, from) - from, end: Math.min(s.end, to) - from }));
    mapSpans(inItem, a.content, a.contentStart, out);
    at = to + 1;
  }
}

/** Markers already in a text: nothing inside one is a secret (redaction is idempotent). */
function markerSpans(text: string): Span[] {
  const spans: Span[] = [];
  for (const m of text.matchAll(/\[REDACTED:[a-z0-9_]+:[0-9a-f]{4}\]/g)) spans.push({ start: m.index, end: m.index + m[0].length, kind: '', order: -1 });
  return spans;
}

/** The text with its spans (merged where they overlap) replaced by markers; the count is added to `into`. */
function applySpans(text: string, spans: Span[], into: RedactionCount): string {
  if (spans.length === 0) return text;
  if (text.includes('[REDACTED:')) {
    const markers = markerSpans(text);
    spans = spans.filter((s) => !markers.some((k) => s.start < k.end && s.end > k.start));
    if (spans.length === 0) return text;
  }
  spans.sort((a, b) => a.start - b.start || a.order - b.order);
  let out = '';
  let copied = 0;
  let i = 0;
  while (i < spans.length) {
    const first = spans[i] as Span;
    let end = first.end;
    i++;
    while (i < spans.length && (spans[i] as Span).start < end) {
      end = Math.max(end, (spans[i] as Span).end);
      i++;
    }
    out += text.slice(copied, first.start) + redactionMarker(first.kind, text.slice(first.start, end));
    copied = end;
    into.count++;
  }
  return out + text.slice(copied);
}

/** Where the counting forms below add the secrets they replace. */
export interface RedactionCount {
  count: number;
}

/**
 * redactJsonText that adds its count to `into`: JSON text (an event's input object, a whole
 * event) with the secrets in its strings replaced over the characters that encode them.
 */
export function redactJsonCounted(text: string, into: RedactionCount): string {
  const g = gate(text);
  if (!g.hiding && !g.named && g.shapes === undefined) return text;
  const spans: Span[] = [];
  findInJson(text, spans, g);
  return applySpans(text, spans, into);
}

/**
 * redactJsonCounted of text[from, to) (an event's input object in its line): the part is read in
 * place, and copied out only when it may hold a secret (the copy is what is returned either way).
 */
export function redactJsonPartCounted(text: string, from: number, to: number, into: RedactionCount): string {
  const g = gate(text, from, to);
  const part = text.slice(from, to);
  if (!g.hiding && !g.named && g.shapes === undefined) return part;
  const spans: Span[] = [];
  findInJson(part, spans, g);
  return applySpans(part, spans, into);
}

/** Redacts the strings of JSON text (see redactJsonCounted). */
export function redactJsonText(text: string): RedactedText {
  const into = { count: 0 };
  const t = redactJsonCounted(text, into);
  return { text: t, count: into.count };
}

/**
 * redactText that adds its count to `into`. Any text: a decoded value (a command, an error),
 * a log line, the bytes of a line that is not JSON. The rules run on the text as it is, and when
 * it holds JSON strings with escapes, on those strings decoded too.
 */
export function redactCounted(text: string, into: RedactionCount): string {
  return redactTextOrJson(text, into, undefined);
}

/** What redactInputCounted also says of the text it returns. */
export interface InputRedaction extends RedactionCount {
  /** True when the text returned is the text given and was read as JSON text (checked by parsing it). */
  inputJson: boolean;
}

/**
 * redactCounted of a tool call's input given as a string, that also says whether what it
 * returns is the input unchanged and JSON text: the projection then need not parse it again.
 */
export function redactInputCounted(text: string, into: InputRedaction): string {
  into.inputJson = false;
  return redactTextOrJson(text, into, into);
}

function redactTextOrJson(text: string, into: RedactionCount, said: InputRedaction | undefined): string {
  const escaped = text.includes('\\') && text.includes('"');
  // JSON text (an object or an array): only its strings, decoded, so no escape is cut.
  if (escaped && isJsonText(text)) {
    const out = redactJsonCounted(text, into);
    if (said !== undefined) said.inputJson = out === text;
    return out;
  }
  const g = gate(text);
  if (!g.named && g.shapes === undefined && !(escaped && g.hiding)) return text;
  const spans: Span[] = [];
  findInText(text, 0, spans, g);
  if (escaped) findInJson(text, spans, g);
  return applySpans(text, spans, into);
}

function isJsonText(text: string): boolean {
  const first = text.trimStart().charCodeAt(0);
  if (first !== 123 /* { */ && first !== 91 /* [ */) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Redacts every secret in a text (see redactCounted). */
export function redactText(text: string): RedactedText {
  const into = { count: 0 };
  const t = redactCounted(text, into);
  return { text: t, count: into.count };
}

/**
 * A line that should be a JSON event (a Kafka record, an imported line): read as JSON when it
 * is one (only its strings change), else as text.
 */
export function redactLine(text: string): RedactedText {
  const first = text.trimStart().charCodeAt(0);
  if (first === 123 /* { */ || first === 91 /* [ */) {
    try {
      JSON.parse(text);
      return redactJsonText(text);
    } catch {
      // not JSON: as text
    }
  }
  return redactText(text);
}

/**
 * redactLine over bytes: a line that is UTF-8 JSON has only its strings changed, anything else
 * is redacted as raw bytes (redactBytes).
 */
export function redactLineBytes(bytes: Uint8Array): { readonly bytes: Buffer; readonly count: number } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let text: string;
  try {
    text = UTF8.decode(buffer);
    JSON.parse(text);
  } catch {
    return redactBytes(buffer);
  }
  const r = redactJsonText(text);
  return r.count === 0 ? { bytes: buffer, count: 0 } : { bytes: Buffer.from(r.text, 'utf8'), count: r.count };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Longest text redactShortCounted remembers, and how many it remembers before it forgets them all. */
const SHORT_TEXT = 64;
const SHORT_MEMO_SIZE = 4096;
/** Short texts already redacted: the redacted text and its count, or the text itself when it held none. */
const shortMemo = new Map<string, RedactedText | string>();
/** The last short text of each length looked up, and its result (as shortMemo holds it). */
const lastShortIn: (string | undefined)[] = new Array<undefined>(SHORT_TEXT + 1).fill(undefined);
const lastShortOut: (RedactedText | string | undefined)[] = new Array<undefined>(SHORT_TEXT + 1).fill(undefined);

/**
 * redactCounted for the short fields of an event (session, turn, agent, host, model, tool, a
 * user's event id): the same few values come back event after event. Redaction is a function of
 * the text alone, so the remembered result is the result. The memo is bounded.
 */
export function redactShortCounted(text: string, into: RedactionCount): string {
  if (text.length > SHORT_TEXT) return redactCounted(text, into);
  // The last text of each length (a session id, a model, a host: the same value event after
  // event, often the same string) is compared before the memo is asked: no hash to compute.
  const slot = text.length;
  let known: RedactedText | string | undefined;
  if (lastShortIn[slot] === text) known = lastShortOut[slot];
  else {
    known = shortMemo.get(text);
    if (known !== undefined) {
      lastShortIn[slot] = text;
      lastShortOut[slot] = known;
    }
  }
  if (known !== undefined) {
    if (typeof known === 'string') return known;
    into.count += known.count;
    return known.text;
  }
  const r = redactText(text);
  if (shortMemo.size >= SHORT_MEMO_SIZE) shortMemo.clear();
  shortMemo.set(text, r.count === 0 ? text : r);
  into.count += r.count;
  return r.text;
}

/**
 * The part of a large input the gate reads at a time (small enough for its text to be young
 * garbage the next scavenge takes: parts of 1 MiB piled up to 40 MB on a 100 MB line), and how
 * far each part reaches into its neighbours; inputs over LARGE_INPUT are read so.
 */
const GATE_WINDOW = 64 * 1024;
const GATE_REACH = 4096;
const LARGE_INPUT = 1 << 20;

/**
 * True when the gate finds no place in the bytes read as Latin-1: what gate() says of the whole,
 * read in parts of GATE_WINDOW characters that reach GATE_REACH into their neighbours (every
 * place the gate looks at is a few characters before and after it, all literals and words far
 * shorter than the reach). The one rule that looks further, the URL password's `://` (an @
 * anywhere after it), sends any input holding `://` to the whole reading.
 */
function holdsNoPlace(buffer: Buffer): boolean {
  if (buffer.includes('://', 0, 'latin1')) return false;
  for (let start = 0; start < buffer.byteLength; start += GATE_WINDOW) {
    const from = Math.max(0, start - GATE_REACH);
    const to = Math.min(buffer.byteLength, start + GATE_WINDOW + GATE_REACH);
    if (gate(buffer.toString('latin1', from, to)) !== NOTHING) return false;
  }
  return true;
}

/**
 * Redacts raw bytes, valid UTF-8 or not: read as Latin-1 (one character per byte, so no byte is
 * lost or changed), redacted as text and as JSON strings, written back as Latin-1.
 */
export function redactBytes(bytes: Uint8Array): { readonly bytes: Buffer; readonly count: number } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // A large input the gate finds nothing in is returned without being read as one text (a copy
  // of its size: a 100 MB line would cost another 100 MB).
  if (buffer.byteLength > LARGE_INPUT && holdsNoPlace(buffer)) return { bytes: buffer, count: 0 };
  const r = redactText(buffer.toString('latin1'));
  return r.count === 0 ? { bytes: buffer, count: 0 } : { bytes: Buffer.from(r.text, 'latin1'), count: r.count };
}

export { redactionFromEnv } from './env.ts';
