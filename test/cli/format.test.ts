// Table output never cuts the line number (or Kafka offset) off a source.
import { describe, expect, it } from 'vitest';
import { renderRows } from '../../src/cli/format.ts';

describe('table output', () => {
  it('keeps the end of a long file:line or topic/partition/offset source, cutting the path instead', () => {
    const file = `${'/home/user/projects/'.repeat(5)}events.jsonl:12345`;
    const kafka = `${'very-long-topic-name-'.repeat(4)}/3/987654`;
    const lines = renderRows([{ source: file }, { source: kafka }, { source: 'x'.repeat(80) }], 'table').split('\n');
    expect(lines[2]).toMatch(/^….*events\.jsonl:12345$/);
    expect(lines[2]?.length).toBe(60);
    expect(lines[3]?.trimEnd()).toMatch(/^….*\/3\/987654$/);
    expect(lines[4]).toMatch(/^x{59}…$/);
  });
});
