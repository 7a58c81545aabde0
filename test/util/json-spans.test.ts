import { describe, expect, it } from 'vitest';
import { indexObject, skipValue } from '../../src/util/json-spans.ts';

describe('indexObject', () => {
  it('returns the verbatim text of each member, in key order', () => {
    const text = '{"b":9007199254740993,"a":-0,"c":"caf\\u00e9","d":{"x":[1,{"y":"}"}]},"e":null}';
    const index = indexObject(text);
    expect(index).toBeDefined();
    const slice = (k: string): string | undefined => {
      const s = index?.members.get(k);
      return s && text.slice(s.start, s.end);
    };
    expect([...(index?.members.keys() ?? [])]).toEqual(['b', 'a', 'c', 'd', 'e']);
    expect(slice('b')).toBe('9007199254740993');
    expect(slice('a')).toBe('-0');
    expect(slice('c')).toBe('"caf\\u00e9"');
    expect(slice('d')).toBe('{"x":[1,{"y":"}"}]}');
    expect(slice('e')).toBe('null');
    expect(index?.maxDepth).toBe(4);
  });

  it('decodes escaped keys and keeps the last of repeated keys, like JSON.parse', () => {
    const text = '{ "k\\u0065y" : 1 , "key": 2 }';
    const index = indexObject(text);
    const span = index?.members.get('key');
    expect(span && text.slice(span.start, span.end)).toBe('2');
    expect(index?.members.size).toBe(1);
  });

  it('compares keys in place: no prefix or extension of a key matches, and an escaped key written last wins', () => {
    const text = '{"key":1,"keys":2,"k":3,"k\\u0065y":4,"\\"q\\"":5}';
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const index = indexObject(text);
    for (const name of ['key', 'keys', 'k', '"q"', 'ke', 'keyss', 'q', '']) {
      const span = index?.members.get(name);
      expect(span === undefined ? undefined : JSON.parse(text.slice(span.start, span.end))).toEqual(parsed[name]);
    }
    expect([...(index?.members.keys() ?? [])]).toEqual(['keys', 'k', 'key', '"q"']);
  });

  it('finds every member as JSON.parse reads it, under 16 members (lists) and over (a Map), repeated keys included', () => {
    for (const n of [1, 5, 16, 17, 40]) {
      // Keys k0..k(n-1), then k0 and k(n-1) again with other values: the last occurrence wins.
      const members = Array.from({ length: n }, (_, i) => `"k${i}":${i}`);
      const text = `{${[...members, `"k0":"again"`, `"k${n - 1}":[${n}]`].join(',')}}`;
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const index = indexObject(text);
      expect(index?.members.size).toBe(Object.keys(parsed).length);
      expect([...(index?.members.keys() ?? [])]).toEqual([...Array.from({ length: n }, (_, i) => `k${i}`).filter((k) => k !== 'k0' && k !== `k${n - 1}`), 'k0', `k${n - 1}`].filter((k, i, all) => all.indexOf(k) === i));
      for (const [k, v] of Object.entries(parsed)) {
        const span = index?.members.get(k);
        expect(span && JSON.parse(text.slice(span.start, span.end))).toEqual(v);
      }
      expect(index?.members.get('absent')).toBeUndefined();
      expect(index?.members.get('k')).toBeUndefined();
    }
  });

  it('handles strings with escaped quotes and backslashes', () => {
    const text = '{"a":"x\\"}\\\\","b":2}';
    const index = indexObject(text);
    const b = index?.members.get('b');
    expect(b && text.slice(b.start, b.end)).toBe('2');
  });

  it('is not an object: undefined', () => {
    expect(indexObject('[1,2]')).toBeUndefined();
    expect(indexObject('"s"')).toBeUndefined();
  });

  it('walks 10 000 levels of nesting without recursion', () => {
    const text = `{"deep":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    expect(indexObject(text)?.maxDepth).toBe(10_001);
    expect(skipValue(text, 8).end).toBe(text.length - 1);
  });

  it('never runs past the end of malformed text', () => {
    expect(() => indexObject('{"a":"unterminated')).not.toThrow();
    expect(() => indexObject('{"a":[[[')).not.toThrow();
    expect(() => indexObject('{"a"')).not.toThrow();
  });
});

describe('findSpan', () => {
  it('walks object keys and array indexes to the verbatim text of a nested value', async () => {
    const { findSpan, indexArray } = await import('../../src/util/json-spans.ts');
    const text = '{"message":{"content":[{"type":"text"},{"type":"tool_use","input":{"n":12345678901234567890,"s":"\\u00e9"}}]}}';
    const span = findSpan(text, ['message', 'content', 1, 'input']);
    expect(span && text.slice(span.start, span.end)).toBe('{"n":12345678901234567890,"s":"\\u00e9"}');
    expect(findSpan(text, ['message', 'content', 5])).toBeUndefined();
    expect(findSpan(text, ['nope'])).toBeUndefined();
    expect(indexArray(' [ 1 , "a" , [2] ] ')?.map((s) => ' [ 1 , "a" , [2] ] '.slice(s.start, s.end))).toEqual(['1', '"a"', '[2]']);
    expect(indexArray('[]')).toEqual([]);
  });
});
