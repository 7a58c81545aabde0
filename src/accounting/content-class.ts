// Classifies text for the drift report: bytes/4 is an English-prose approximation and is worse
// for Chinese (3 UTF-8 bytes per character) and for code and JSON (dense punctuation).

export const CONTENT_CLASSES = ['prose', 'cjk', 'code', 'json', 'mixed', 'empty'] as const;
export type ContentClass = (typeof CONTENT_CLASSES)[number];

/** Only this much of a text is inspected; classification must stay cheap on the hot path. */
const SAMPLE_CHARS = 4096;
/** Texts up to this size are confirmed as JSON by parsing them. */
const JSON_PARSE_MAX_CHARS = 65_536;
const CODE_LINE = /(^\s*(import|export|from|def|class|fn|func|function|const|let|var|return|if|for|while|#include|package|pub|use)\b)|[;{}]\s*$|=>|::|\bself\.|\bthis\./;

export function classifyContent(text: string): ContentClass {
  const sample = text.length > SAMPLE_CHARS ? text.slice(0, SAMPLE_CHARS) : text;
  const trimmed = sample.trim();
  if (trimmed === '') return 'empty';
  let cjk = 0;
  let letters = 0;
  for (const ch of trimmed) {
    const cp = ch.codePointAt(0) ?? 0;
    if ((cp >= 0x3040 && cp <= 0x30ff) || (cp >= 0x3400 && cp <= 0x9fff) || (cp >= 0xac00 && cp <= 0xd7af) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xff00 && cp <= 0xffef)) cjk++;
    else if (/\p{L}/u.test(ch)) letters++;
  }
  if (cjk > 0 && cjk >= (cjk + letters) * 0.3) return 'cjk';
  const first = trimmed[0];
  if (first === '{' || first === '[') {
    // Parse small texts to be sure; for large ones the brackets at both ends decide.
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
  const lines = trimmed.split('\n').filter((l) => l.trim() !== '');
  const codeLines = lines.filter((l) => CODE_LINE.test(l)).length;
  if (lines.length > 0 && codeLines / lines.length >= 0.3) return 'code';
  return 'prose';
}
