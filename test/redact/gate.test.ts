// The redaction gate (src/redact/redact.ts) is one hand-written pass over a text's characters.
// Its oracle here is the set of regular expressions it replaced, written out from the rules'
// literals in this file: on texts built to sit on every edge (a literal after a word boundary,
// after `_`, after a JSON escape, inside a word; the name words in any case; short flags after
// each opening character; JSON escapes; non-ASCII neighbours), the pass finds the same places,
// the same rules and the same flags.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gateFindings } from '../../src/redact/redact.ts';
import { CONTEXT_KINDS, REDACTION_RULES } from '../../src/redact/rules.ts';
import { NEGATIVES, POSITIVES } from './corpus.ts';

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const shapes = REDACTION_RULES.map((rule, order) => ({ rule, order })).filter((r) => !CONTEXT_KINDS.has(r.rule.kind));
const INFIX = new Set(['T3BlbkFJ', 'Q~', ':AA', '-us']);
const tokenLiterals = [...new Set(shapes.flatMap((s) => s.rule.literals).filter((l) => !INFIX.has(l)))];
const alternation = tokenLiterals.map(esc).join('|');
const TOKEN = new RegExp(String.raw`\b(?:${alternation})`, 'g');
const GLUED = new RegExp(String.raw`(?:_|\\[nrtbf])(?:${alternation})`, 'g');
const INFIX_RE = /T3BlbkFJ|Q~|:AA|-us[0-9]/g;
const NAMED = /secret|token|pass|pw|credential|key|auth|bearer|:\/\/(?=[\s\S]*@)/gi;
const CLI = /-[pau](?<=[\s"'[,]-[pau])|--user/g;
const HIDING = /\\[u/]/;

function every(re: RegExp, text: string): number[] {
  const out: number[] = [];
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    out.push(m.index);
    re.lastIndex = m.index + 1;
  }
  return out;
}

function oracle(text: string): { at: number[]; kinds: string[]; named: boolean; hiding: boolean } {
  const literalPlaces = [...every(TOKEN, text), ...every(GLUED, text).map((i) => i + (text[i] === '\\' ? 2 : 1)), ...every(INFIX_RE, text)];
  const at = new Set<number>();
  const kinds = new Set<string>();
  for (const i of literalPlaces)
    for (const s of shapes)
      for (const l of s.rule.literals)
        if (text.startsWith(l, i)) {
          at.add(i);
          kinds.add(`${s.rule.kind}#${s.order}`);
        }
  const words = [...every(NAMED, text), ...every(CLI, text)];
  for (const i of words) at.add(i);
  return { at: [...at].sort((a, b) => a - b), kinds: [...kinds].sort(), named: words.length > 0, hiding: HIDING.test(text) };
}

const found = (text: string): ReturnType<typeof oracle> => {
  const g = gateFindings(text);
  return { ...g, at: [...g.at].sort((a, b) => a - b) };
};

const pieces = [
  ...tokenLiterals,
  ...INFIX,
  '-us1',
  'T3BlbkFJ',
  'secret', 'SeCrEt', 'token', 'TOKEN', 'pass', 'PaSs', 'pw', 'PW', 'credential', 'key', 'KEY', 'auth', 'Auth', 'bearer', '://', ':/', '@',
  '-p', '-a', '-u', '--user', '--use', '-',
  '_', '__', '\\n', '\\r', '\\t', '\\b', '\\f', '\\x', '\\u0067', '\\/', '\\',
  ' ', '\t', '\n', '\u00a0', '\u2003', '\ufeff', '"', "'", '[', ',', ':', '=', '.',
  'a', 'Z', '0', '9', 'é', 'ſ', 'K', '\u212a', 'ß', '漢', '😀',
];

describe('the redaction gate', () => {
  it('finds what the expressions it replaced find, on texts built from the literals and their edges', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        expect(found(text), JSON.stringify(text)).toEqual(oracle(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('finds the same on random text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        expect(found(text)).toEqual(oracle(text));
      }),
      { numRuns: 5_000 },
    );
  });

  it('finds in a part of a text what it finds in that part alone', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 6 }), fc.array(fc.constantFrom(...pieces), { maxLength: 8 }), fc.array(fc.constantFrom(...pieces), { maxLength: 6 }), (before, part, after) => {
        const a = before.join('');
        const p = part.join('');
        expect(gateFindings(a + p + after.join(''), a.length, a.length + p.length), JSON.stringify([a, p])).toEqual(gateFindings(p));
      }),
      { numRuns: 20_000 },
    );
  });

  it('finds the same on every text of the redaction corpus', () => {
    const texts = [...POSITIVES.map((p) => p.input), ...NEGATIVES.map((n) => n.input)];
    expect(texts.length).toBeGreaterThan(600);
    for (const t of texts) expect(found(t), t).toEqual(oracle(t));
  });

  it('says nothing of a text with no such place, and something of each kind of place', () => {
    expect(found('plain words, a path /src/app.ts and 42')).toEqual({ at: [], kinds: [], named: false, hiding: false });
    expect(found('x ghp_abc').kinds.length).toBeGreaterThan(0);
    expect(found('xghp_abc').kinds).toEqual([]); // inside a word: no boundary
    expect(found('mcp__ghp_abc').kinds.length).toBeGreaterThan(0); // after _
    expect(found('"\\nghp_abc"').kinds.length).toBeGreaterThan(0); // after an escape
    expect(found('my PassWord').named).toBe(true);
    expect(found('mysql -pS3cret').named).toBe(true);
    expect(found('mysql x-pS3cret').named).toBe(false);
    expect(found('"\\u0067hp_"').hiding).toBe(true);
  });
});
