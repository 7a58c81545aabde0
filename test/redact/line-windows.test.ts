// The rules that judge a name run only on the lines of a long text that hold a name word
// (src/redact/redact.ts, runNamedRules). That is an optimisation, never a change: the spans they
// find must be the spans the same rules find searching the whole text, on every text. The oracle
// is the whole-text search (the rules' expressions run as they are, no lines taken apart).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { namedRuleSpans } from '../../src/redact/redact.ts';
import { corpusLines, corpusOrSkip } from '../helpers/corpus.ts';
import { NEGATIVES, POSITIVES } from './corpus.ts';

function expectSame(text: string): void {
  const whole = namedRuleSpans(text, false);
  // The lines found by NAME_WORD's expression (a decoded string, a joined argv) and by the gate's
  // name places (a text the gate ran on): both ways, the whole text's spans.
  expect(namedRuleSpans(text, true), text.slice(0, 200)).toEqual(whole);
  expect(namedRuleSpans(text, true, true), text.slice(0, 200)).toEqual(whole);
}

/** Filler lines without a name word, so a text is long enough to be taken by lines. */
const FILLER = Array.from({ length: 12 }, (_v, i) => `    const value${i} = compute(input, ${i}); // plain code line ${i}`).join('\n');

describe('named rules by lines: the same spans as on the whole text', () => {
  it.each([
    ['an assignment on a line of its own', `${FILLER}\nexport API_TOKEN=ghx8sd7f6g5h4j3k2l1\n${FILLER}`],
    ['a value at the very end, no newline', `${FILLER}\nDB_PASSWORD=hunter2hunter2`],
    ['CRLF line ends', `${FILLER.replace(/\n/g, '\r\n')}\r\nSECRET_KEY="abc def ghi"\r\n${FILLER}`],
    ['a name word on one line, its assignment on the next (split: no secret either way)', `${FILLER}\nmy token\n=value123456\n${FILLER}`],
    ['a dotted name after a word (token.x=…, dotted)', `${FILLER}\nconfig.token.x=s3cr3tvalue99\n${FILLER}`],
    ['a field and a flag', `${FILLER}\n  "password": "pa55word-real"\n  run --api-key=k3y-v4lue-123 --verbose\n${FILLER}`],
    ['a name word as the first characters', `token=abcdef123456\n${FILLER}`],
    ['several words on adjacent lines', `${FILLER}\nPASS=a1b2c3d4\nKEY=z9y8x7w6\nAUTH_TOKEN='q1w2e3r4t5'\n${FILLER}`],
    ['an unquoted value to its cap and beyond', `${FILLER}\nSECRET=${'x'.repeat(300)}\n${FILLER}`],
    ['YAML', `${FILLER}\ndatabase:\n  password: hunter2hunter2\n  user: app\n${FILLER}`],
  ])('%s', (_name, text) => {
    expect(text.length).toBeGreaterThan(512);
    expectSame(text);
    // Most hold a secret the rules find (the split one cannot; a dotted name and a run of one
    // letter are judged no secret by the name's judge): the comparison is not of empty lists.
    if (!/split|dotted|cap/.test(_name)) expect(namedRuleSpans(text, false).length).toBeGreaterThan(0);
  });

  it('the redaction corpus, each input and its lines repeated past the threshold', () => {
    let found = 0;
    for (const p of [...POSITIVES, ...NEGATIVES]) {
      const text = `${FILLER}\n${p.input.replace(/\\n/g, '\n')}\n${FILLER}\n${p.input}`;
      expectSame(text);
      found += namedRuleSpans(text, false).length;
    }
    expect(found).toBeGreaterThan(50);
  });

  it('generated texts of names, words, operators, quotes, values and line ends', () => {
    const piece = fc.constantFrom(
      'token', 'TOKEN', 'pass', 'Pw', 'pwd', 'secret', 'Key', 'auth', 'credential', 'api', '_', '.', '-', '--', '$', 'x', 'value1234', 'ghp',
      '=', ':', ' = ', ': ', '=>', ':=', '+=', '==', '=~', '"', "'", '`', ']', '[', ' ', '\t', '\n', '\r\n', '\r', ',', ';', '@', '/', 'é', '😀',
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 120 }), fc.nat(600), (parts, pad) => {
        const body = parts.join('');
        const text = `${'a'.repeat(pad % 7)}${'\n'.repeat(pad % 3)}${FILLER.slice(0, pad)}\n${body}\n${FILLER.slice(pad)}`;
        expectSame(text);
        expectSame(body.repeat(Math.ceil(600 / Math.max(body.length, 1))));
      }),
      { seed: 3131, numRuns: 800 },
    );
  });
});

const CORPUS = corpusOrSkip('codex', 'named rules by lines on the Codex corpus (test/redact/line-windows.test.ts)');

describe.skipIf(CORPUS === null)('named rules by lines on the Codex corpus', () => {
  it('every function call input and every output: the same spans', () => {
    let texts = 0;
    let long = 0;
    for (const line of corpusLines(CORPUS as string)) {
      if (!line.includes('"function_call')) continue;
      let obj: { payload?: { arguments?: unknown; output?: unknown } };
      try {
        obj = JSON.parse(line) as typeof obj;
      } catch {
        continue;
      }
      for (const t of [obj.payload?.arguments, obj.payload?.output]) {
        if (typeof t !== 'string') continue;
        texts++;
        if (t.length >= 512) long++;
        expectSame(t);
        // The decoded command (an argv's script) as the redactor reads it.
        try {
          const cmd = (JSON.parse(t) as { command?: unknown }).command;
          if (Array.isArray(cmd)) expectSame(cmd.map(String).join(' '));
        } catch {
          // not JSON: read as text above
        }
      }
    }
    expect(texts).toBeGreaterThan(1000);
    expect(long).toBeGreaterThan(100);
  });
});
