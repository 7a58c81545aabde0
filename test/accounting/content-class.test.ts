// The content classifier with its CJK prefilter is the classifier it replaced, class for class:
// equal to the former one (kept below as the reference) for every character of the BMP among
// Latin and CJK letters, on generated texts and on every string value of the shared corpus's
// real logs.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyContent, type ContentClass } from '../../src/accounting/content-class.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';

const CODE_LINE = /(^\s*(import|export|from|def|class|fn|func|function|const|let|var|return|if|for|while|#include|package|pub|use)\b)|[;{}]\s*$|=>|::|\bself\.|\bthis\./;

/** The classifier as it was before (regular expressions), the reference. */
function reference(text: string): ContentClass {
  const sample = text.length > 1024 ? text.slice(0, 1024) : text;
  const trimmed = sample.trim();
  if (trimmed === '') return 'empty';
  let cjk = 0;
  let letters = 0;
  for (let i = 0; i < trimmed.length; i++) {
    const c = trimmed.charCodeAt(i);
    if (c < 0x80) {
      if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) letters++;
    } else if ((c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xff00 && c <= 0xffef)) cjk++;
    else if ((c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7) || (c >= 0x370 && c <= 0x52f)) letters++;
  }
  if (cjk > 0 && cjk >= (cjk + letters) * 0.3) return 'cjk';
  const first = trimmed[0];
  if (first === '{' || first === '[') {
    const last = text.trimEnd().at(-1);
    if (text.length > 8192) {
      if ((first === '{' && last === '}') || (first === '[' && last === ']')) return 'json';
    } else {
      try {
        JSON.parse(text);
        return 'json';
      } catch {
        // not JSON
      }
    }
  }
  let nonEmpty = 0;
  let codeLines = 0;
  for (const line of trimmed.split('\n')) {
    if (line.trim() === '') continue;
    nonEmpty++;
    if (CODE_LINE.test(line)) codeLines++;
  }
  if (nonEmpty > 0 && codeLines / nonEmpty >= 0.3) return 'code';
  return 'prose';
}

/** A small deterministic generator (mulberry32), so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  'import', 'export', 'from', 'def', 'class', 'fn', 'func', 'function', 'const', 'let', 'var', 'return', 'if', 'for', 'while', '#include', 'package', 'pub', 'use',
  'imports', 'xif', 'fort', 'use_', 'pub1', '#', 'include', 'self', 'self.', 'this.', 'xself.', '_this.', 'this', '.', '=>', '=', '>', '::', ':', ';', '{', '}', '[', ']', '"', ',',
  ' ', '  ', '\t', '\r', '\v', '\f', '\u00a0', '\u1680', '\u2000', '\u200a', '\u200b', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff', '\u180e', '\u0085',
  'a', 'Z', '9', '_', 'é', 'ж', '中文', 'テスト', '한', 'word', 'The fox.', '1', 'null', 'true', '\n', '\n\n',
];

function generated(rand: () => number, pieces: number): string {
  let out = '';
  for (let i = 0; i < pieces; i++) out += PIECES[Math.floor(rand() * PIECES.length)];
  return out;
}

/** Every string value of a JSON value (the texts of real logs: outputs, inputs, messages). */
function stringsOf(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) stringsOf(v, out);
}

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? jsonlFiles(full) : name.endsWith('.jsonl') ? [full] : [];
  });
}

describe('content classes without regular expressions', () => {
  it('counts CJK as before for every BMP character, alone and among Latin and CJK letters', () => {
    const mismatches: string[] = [];
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      for (const text of [ch, `ab${ch}`, `${ch}${ch}abcd`, `中${ch}abcdefgh`, `テ${ch}`, `${ch.repeat(3)}abcdefg`]) {
        if (classifyContent(text) !== reference(text)) mismatches.push(`U+${c.toString(16).padStart(4, '0')} in ${JSON.stringify(text)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('classifies generated texts as the former classifier did', () => {
    const rand = random(42);
    const counts = new Map<ContentClass, number>();
    for (let n = 0; n < 20_000; n++) {
      let text = generated(rand, Math.floor(rand() * 40));
      if (rand() < 0.1) text = `{"k": ${JSON.stringify(text)}}`;
      if (rand() < 0.05) text = text.repeat(60); // past the sample and the JSON parse limit
      const got = classifyContent(text);
      if (got !== reference(text)) expect.fail(`${JSON.stringify(text)}: ${got}, the former classifier said ${reference(text)}`);
      counts.set(got, (counts.get(got) ?? 0) + 1);
    }
    // The generator reaches every class the classifier returns, or the comparison proves little.
    expect([...counts.keys()].sort()).toEqual(['cjk', 'code', 'empty', 'json', 'prose']);
  });

  const corpus = corpusOrSkip('', 'content classes on the corpus');
  it.skipIf(corpus === null)('classifies every string of the corpus logs as the former classifier did', () => {
    const texts: string[] = [];
    for (const file of jsonlFiles(corpus as string)) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (line.trim() === '') continue;
        try {
          stringsOf(JSON.parse(line), texts);
        } catch {
          texts.push(line);
        }
      }
    }
    expect(texts.length).toBeGreaterThan(10_000);
    const differ = texts.filter((t) => classifyContent(t) !== reference(t)).slice(0, 5);
    expect(differ).toEqual([]);
    const classes = new Set(texts.map(classifyContent));
    expect([...classes].sort()).toEqual(['cjk', 'code', 'empty', 'json', 'prose']);
  });
});
