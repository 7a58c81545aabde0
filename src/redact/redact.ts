// Replaces secrets (REDACTION_RULES) with a marker that keeps the kind and a short hash,
// [REDACTED:github_token:3f9a], and leaves every other byte as it was: JSON text stays valid JSON
// with the same key order and the same numbers, bytes that are not UTF-8 stay the same bytes.
import { sha256Hex } from '../util/hash.ts';
import { isIdentifierPath, isPlaceholderValue, isSecretName, kindOfNamed, REDACTION_RULES, type RedactionRule } from './rules.ts';

export interface RedactedText {
  /** The text with every secret replaced (the same string when nothing was). */
  readonly text: string;
  /** Secrets replaced. */
  readonly count: number;
}

/** A rule ready to run: the rule and its expression. */
interface CompiledRule {
  readonly rule: RedactionRule;
  readonly regex: RegExp;
}

interface CompiledPass {
  /** A cheap scan for what every rule of the pass starts with or contains; no hit, no secret. */
  readonly prefilter: RegExp;
  readonly rules: readonly CompiledRule[];
}

/**
 * Literals (a scan for fixed strings runs ~20x faster than the rules themselves): each vendor
 * shape starts with one of them, each name-based rule needs one of the words or a URL.
 */
const PREFILTER_SHAPES = /-----BEGIN|sk-|xai-|AIza|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|gldt-|glptt-|glrt-|glcbt-|gloas-|glsoat-|glft-|glimt-|glagent-|glffct-|A3T|AKIA|ASIA|ABIA|ACCA|xox|xapp-|hooks\.slack\.com|eyJ/;
const PREFILTER_NAMES = /secret|token|passw|passphrase|credential|key|bearer|authorization|:\/\//i;

/**
 * Each rule runs on its own, in the order of REDACTION_RULES (measured: one alternation of
 * all rules ran 3x slower than the rules one by one): the vendor shapes first, then the
 * name-based rules, which skip a value already redacted.
 */
function compilePass(rules: readonly RedactionRule[], prefilter: RegExp): CompiledPass {
  return {
    prefilter,
    rules: rules.map((rule) => ({ rule, regex: new RegExp(rule.pattern, rule.caseInsensitive ? 'gi' : 'g') })),
  };
}

const PASSES: readonly CompiledPass[] = [
  compilePass(REDACTION_RULES.filter((r) => !r.caseInsensitive), PREFILTER_SHAPES),
  compilePass(REDACTION_RULES.filter((r) => r.caseInsensitive), PREFILTER_NAMES),
];

/** The marker that replaces a secret: its kind and the first 4 hex digits of its SHA-256. */
export function redactionMarker(kind: string, secret: string): string {
  return `[REDACTED:${kind}:${sha256Hex(Buffer.from(secret, 'latin1'), 4)}]`;
}

/** Secrets replaced by the runs since the caller last set it to 0 (no result object per rule). */
let replaced = 0;

function runRule(c: CompiledRule, text: string): string {
  const { rule, regex } = c;
  if (rule.anchor !== undefined && !rule.anchor.test(text)) return text;
  regex.lastIndex = 0;
  let out = '';
  let copiedTo = 0;
  let count = 0;
  let m: RegExpExecArray | null;
  while ((m = regex.exec(text)) !== null) {
    if (m[0] === '') {
      regex.lastIndex = m.index + 1;
      continue;
    }
    const groups = m.groups;
    const secret = groups?.['s'] ?? m[0];
    const name = groups?.['n'];
    if (secret.startsWith('[REDACTED:') || (rule.named && (name === undefined || !isSecretName(name) || isPlaceholderValue(secret) || isCode(rule, secret, text, m.index + m[0].length)))) {
      // Not a secret's name: look again from the next character (a token inside this match,
      // `sort_key=ghp_…`, is still found).
      regex.lastIndex = m.index + 1;
      continue;
    }
    const kind = name === undefined ? rule.kind : kindOfNamed(rule.kind, name);
    const secretStart = m.index + (groups?.['s'] === undefined ? 0 : m[0].lastIndexOf(secret));
    out += text.slice(copiedTo, secretStart) + redactionMarker(kind, secret);
    copiedTo = secretStart + secret.length;
    regex.lastIndex = Math.max(copiedTo, m.index + 1);
    count++;
  }
  if (count === 0) return text;
  replaced += count;
  return out + text.slice(copiedTo);
}

function runPass(pass: CompiledPass, text: string): string {
  if (!pass.prefilter.test(text)) return text;
  let t = text;
  for (const rule of pass.rules) t = runRule(rule, t);
  return t;
}

/**
 * An assignment that is code, not configuration: its value is followed by `(` or `.`
 * (`token = Token.sign(`) or is a path of identifiers (`token = socket.assigns.token`).
 */
function isCode(rule: RedactionRule, value: string, text: string, end: number): boolean {
  if (rule.codeAware !== true) return false;
  const c = text.charCodeAt(end);
  return c === 40 /* ( */ || c === 46 /* . */ || isIdentifierPath(value);
}

/** The text with every secret replaced; what was replaced is added to `replaced`. */
function redactCounting(text: string): string {
  let t = text;
  for (const pass of PASSES) t = runPass(pass, t);
  return t;
}

/** Redacts every secret in a text (JSON or not). */
export function redactText(text: string): RedactedText {
  replaced = 0;
  const t = redactCounting(text);
  const count = replaced;
  return count === 0 ? { text, count } : { text: t, count };
}

/** Where the counting forms below add the secrets they replace. */
export interface RedactionCount {
  count: number;
}

/** redactText that returns the text and adds its count to `into` (no result object). */
export function redactCounted(text: string, into: RedactionCount): string {
  replaced = 0;
  const t = redactCounting(text);
  into.count += replaced;
  return t;
}

/** Longest text redactShortCounted remembers, and how many it remembers before it forgets them all. */
const SHORT_TEXT = 64;
const SHORT_MEMO_SIZE = 4096;
/** Short texts already redacted: the redacted text and its count, or the text itself when it held none. */
const shortMemo = new Map<string, RedactedText | string>();

/**
 * redactCounted for the short fields of an event (session, turn, agent, host, model, tool): the
 * same few values come back event after event, and the two prefilters cost ~2 ns a character
 * each time. Redaction is a function of the text alone, so the remembered result is the result.
 * The memo is bounded: at SHORT_MEMO_SIZE texts it is emptied.
 */
export function redactShortCounted(text: string, into: RedactionCount): string {
  if (text.length > SHORT_TEXT) return redactCounted(text, into);
  const known = shortMemo.get(text);
  if (known !== undefined) {
    if (typeof known === 'string') return known;
    into.count += known.count;
    return known.text;
  }
  replaced = 0;
  const t = redactCounting(text);
  if (shortMemo.size >= SHORT_MEMO_SIZE) shortMemo.clear();
  shortMemo.set(text, replaced === 0 ? text : { text: t, count: replaced });
  into.count += replaced;
  return t;
}

/**
 * Redacts raw bytes, valid UTF-8 or not: read as Latin-1 (one character per byte, so no byte is
 * lost or changed), redacted (every rule matches ASCII only), written back as Latin-1.
 */
export function redactBytes(bytes: Uint8Array): { readonly bytes: Buffer; readonly count: number } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = redactText(buffer.toString('latin1'));
  return r.count === 0 ? { bytes: buffer, count: 0 } : { bytes: Buffer.from(r.text, 'latin1'), count: r.count };
}

/** Whether redaction is on for this process: on unless TOOLCANON_REDACT=0 (or false / off / no). */
export function redactionFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env['TOOLCANON_REDACT'];
  return v === undefined || !/^(?:0|false|off|no)$/i.test(v.trim());
}
