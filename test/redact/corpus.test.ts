// The redaction corpus through the real decoder (issue 30): every positive (each rule, in plain,
// JSON-escaped and argv forms) leaves no piece of its secret in any stored column, and no
// negative (hashes, UUIDs, base64 images, identifiers, config names, commands, logs) is touched.
// bench/redact-corpus.ts prints the same figures.
import { describe, expect, it } from 'vitest';
import { decodeEvent, DEFAULT_LIMITS } from '../../src/decode/event.ts';
import { REDACTION_RULES } from '../../src/redact/rules.ts';
import { evaluateCorpus, NEGATIVES, POSITIVES } from './corpus.ts';

const result = evaluateCorpus((line) => {
  const o = decodeEvent(Buffer.from(line), 'corpus.jsonl:1', '2026-12-06 10:00:00.000', DEFAULT_LIMITS);
  return o.kind === 'row' ? { kind: o.kind, row: o.row as unknown as Record<string, unknown> } : { kind: o.kind };
});

describe('the redaction corpus', () => {
  it('has 300+ positives in three forms and 300+ negatives of several kinds', () => {
    expect(POSITIVES.length).toBeGreaterThanOrEqual(300);
    expect(NEGATIVES.length).toBeGreaterThanOrEqual(300);
    for (const form of ['plain', 'escaped', 'argv']) expect(POSITIVES.filter((p) => p.form === form).length, form).toBeGreaterThanOrEqual(100);
    expect(new Set(NEGATIVES.map((n) => n.what)).size).toBeGreaterThanOrEqual(10);
  });

  it('has a positive of every rule (a new rule is in the corpus the day it is added)', () => {
    const covered = new Set(POSITIVES.map((p) => p.rule));
    for (const rule of REDACTION_RULES) expect(covered, rule.kind).toContain(rule.kind);
  });

  it('recall 100 %: no piece of any positive secret is stored', () => {
    expect(result.missed).toEqual([]);
    expect(result.caught).toBe(result.positives);
  });

  it('0 false positives: every negative is stored byte-equal, with no redaction', () => {
    expect(result.falsePositives).toEqual([]);
  });
});
