// Classifies text for the drift report: bytes/4 is an English-prose approximation and is worse
// for Chinese (3 UTF-8 bytes per character) and for code and JSON (dense punctuation).

export const CONTENT_CLASSES = ['prose', 'cjk', 'code', 'json', 'mixed', 'empty'] as const;
export type ContentClass = (typeof CONTENT_CLASSES)[number];

/** Only this much of a text is inspected; classification must stay cheap on the hot path. */
const SAMPLE_CHARS = 1024;
/** Texts up to this size are confirmed as JSON by parsing them; larger ones by their brackets. */
const JSON_PARSE_MAX_CHARS = 8192;
const CODE_LINE = /(^\s*(import|export|from|def|class|fn|func|function|const|let|var|return|if|for|while|#include|package|pub|use)\b)|[;{}]\s*$|=>|::|\bself\.|\bthis\./;

/** A character isCjk counts (the same ranges). */
const CJK_CHAR = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/;

/** A character String.prototype.trim keeps (\s is the same set trim removes). */
const NOT_SPACE = /\S/;

/** Lines of `text` split at '\n' (an empty text is one empty line, as split gives). */
function countLines(text: string): number {
  let n = 1;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) n++;
  return n;
}

function isCjk(c: number): boolean {
  return (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xff00 && c <= 0xffef);
}

/** Letters of alphabetic scripts (Latin, Greek, Cyrillic, ...): enough to weigh CJK against. */
function isAlphabetic(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7) || (c >= 0x370 && c <= 0x52f);
}

export function classifyContent(text: string): ContentClass {
  const sample = text.length > SAMPLE_CHARS ? text.slice(0, SAMPLE_CHARS) : text;
  const trimmed = sample.trim();
  if (trimmed === '') return 'empty';
  // CJK when 30 % of the letters are CJK: counted only when there is a CJK character at all
  // (the expression finds out natively; a loop of charCodeAt over every text was most of the
  // classifier's time on the hot path).
  if (CJK_CHAR.test(trimmed)) {
    let cjk = 0;
    let letters = 0;
    for (let i = 0; i < trimmed.length; i++) {
      const c = trimmed.charCodeAt(i);
      if (c < 0x80) {
        if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) letters++;
      } else if (isCjk(c)) cjk++;
      else if (isAlphabetic(c)) letters++;
    }
    if (cjk >= (cjk + letters) * 0.3) return 'cjk';
  }
  const first = trimmed[0];
  if (first === '{' || first === '[') {
    const last = text.trimEnd().at(-1);
    if (text.length > JSON_PARSE_MAX_CHARS) {
      if ((first === '{' && last === '}') || (first === '[' && last === ']')) return 'json';
    } else {
      try {
        JSON.parse(text);
        return 'json';
      } catch {
        // not JSON: fall through
      }
    }
  }
  // Code when 30 % of the non-empty lines look like code. The lines are walked in place (no
  // array of them), and the walk stops once the verdict cannot change: code when the code lines
  // are 30 % of every line, even if all the rest are empty; prose when they stay under 30 % even
  // if all the rest are code. Division is exact on these integers and rounded monotonically, so
  // an early verdict is the one the full count gives.
  const total = countLines(trimmed);
  let seen = 0;
  let nonEmpty = 0;
  let codeLines = 0;
  for (let from = 0; from <= trimmed.length; ) {
    const nl = trimmed.indexOf('\n', from);
    const to = nl < 0 ? trimmed.length : nl;
    const line = trimmed.slice(from, to);
    from = to + 1;
    seen++;
    if (!NOT_SPACE.test(line)) continue;
    nonEmpty++;
    if (CODE_LINE.test(line)) {
      codeLines++;
      if (codeLines / total >= 0.3) return 'code';
    } else {
      const rest = total - seen;
      if ((codeLines + rest) / (nonEmpty + rest) < 0.3) return 'prose';
    }
  }
  if (nonEmpty > 0 && codeLines / nonEmpty >= 0.3) return 'code';
  return 'prose';
}
