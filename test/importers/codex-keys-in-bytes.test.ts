// The Codex first pass reads the keys a line names from its bytes (keysInBytes) instead of
// parsing it: what the parse would note must always be among them (the index may be a superset,
// which only holds a call longer, never a subset, which would write a call before its output).
// The oracle is the parse's rule written out here: `call_id` of the record and of its payload,
// and `id` where that object's type is local_shell_call, on a line that parses as an object.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keysInBytes } from '../../src/importers/codex/parser.ts';
import { corpusLines, corpusOrSkip } from '../helpers/corpus.ts';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

function parsedKeys(text: string): string[] {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch {
    return [];
  }
  if (!isRec(obj)) return [];
  const out: string[] = [];
  for (const o of [obj, obj['payload']]) {
    if (!isRec(o)) continue;
    if (typeof o['call_id'] === 'string') out.push(o['call_id']);
    if (o['type'] === 'local_shell_call' && typeof o['id'] === 'string') out.push(o['id']);
  }
  return out;
}

function expectSuperset(text: string): void {
  const keys = keysInBytes(Buffer.from(text, 'utf8'));
  if (keys === undefined) return; // parsed instead
  for (const k of parsedKeys(text)) expect(keys, text).toContain(k);
}

describe('keysInBytes: every key the parse notes', () => {
  it.each([
    ['a call', '{"timestamp":"2025-10-10T16:10:00.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"call_1"}}'],
    ['spaces around the colon', '{"type":"response_item","payload":{"type":"function_call_output","call_id" \t:  "call_2","output":"x"}}'],
    ['escapes in the value', '{"payload":{"call_id":"ca\\"ll\\\\3\\n\\/"}}'],
    ['a non-ASCII value', '{"payload":{"call_id":"appel-été-😀"}}'],
    ['a duplicate key (the last wins in the parse)', '{"payload":{"call_id":"first","call_id":"second"}}'],
    ['a record-level call_id', '{"type":"function_call","call_id":"legacy-1","name":"shell","arguments":"{}"}'],
    ['a local shell call', '{"type":"response_item","payload":{"type":"local_shell_call","id":"ls-1","status":"completed","action":{"type":"exec","command":["ls"]}}}'],
    ['call_id quoted inside a string value', '{"payload":{"type":"function_call","arguments":"{\\"call_id\\":\\"inner\\"}","call_id":"outer"}}'],
    ['a value ending in a backslash', '{"payload":{"output":"a\\\\","call_id":"after-backslash"}}'],
  ])('%s', (_name, text) => {
    const keys = keysInBytes(Buffer.from(text, 'utf8'));
    expect(keys).toBeDefined();
    expect(parsedKeys(text).length).toBeGreaterThan(0);
    expectSuperset(text);
  });

  it('a `\\u` escape or a web search: parsed instead (undefined)', () => {
    expect(keysInBytes(Buffer.from('{"payload":{"call\\u005fid":"x"}}'))).toBeUndefined();
    expect(keysInBytes(Buffer.from('{"payload":{"type":"web_search_call","call_id":"w"}}'))).toBeUndefined();
  });

  it('not a string, no colon, no closing quote: no key from it', () => {
    expect(keysInBytes(Buffer.from('{"payload":{"call_id":12}}'))).toEqual([]);
    expect(keysInBytes(Buffer.from('{"type":"call_id"}'))).toEqual([]);
    expect(keysInBytes(Buffer.from('{"payload":{"call_id":"never closed'))).toEqual([]);
  });

  it('generated records: a superset of the parse, whatever the spacing and escapes', () => {
    const key = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('call_1', 'a"b', 'c\\d', 'é😀', ''));
    const value = fc.oneof(key, fc.integer(), fc.constant(null), fc.constantFrom('call_id', 'local_shell_call'));
    const member = fc.tuple(fc.constantFrom('call_id', 'id', 'type', 'output', 'name'), value);
    const object = fc.array(member, { maxLength: 5 }).map((ms) => Object.fromEntries(ms));
    const record = fc.record({ type: fc.constantFrom('response_item', 'event_msg', 'local_shell_call', 'function_call'), payload: object, call_id: fc.option(key), id: fc.option(key) });
    const spacing = fc.constantFrom(0, 2);
    fc.assert(
      fc.property(record, spacing, (r, indent) => {
        const text = JSON.stringify(r, null, indent).replace(/\n/g, ' ');
        expectSuperset(text);
      }),
      { seed: 31, numRuns: 500 },
    );
  });
});

const CORPUS = corpusOrSkip('codex', 'keysInBytes on the Codex corpus (test/importers/codex-keys-in-bytes.test.ts)');

describe.skipIf(CORPUS === null)('keysInBytes on every line of the Codex corpus', () => {
  it('a superset of the parse on each line', () => {
    let lines = 0;
    let read = 0;
    for (const text of corpusLines(CORPUS as string)) {
      lines++;
      if (keysInBytes(Buffer.from(text, 'utf8')) !== undefined) read++;
      expectSuperset(text);
    }
    expect(lines).toBeGreaterThan(10_000);
    expect(read).toBeGreaterThan(lines / 2);
  });
});
