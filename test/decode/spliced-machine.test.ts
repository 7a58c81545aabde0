// A line `import --to-kafka` published (the importing machine spliced in front, the rest byte for
// byte) that the worker cannot read as JSON (too deep, too large, cut off) is dead-lettered with
// that machine, as the machine's own import would record it; a readable event's own fields win,
// and a line without the prefix keeps the caller's machine.
import { describe, expect, it } from 'vitest';
import { decodeEvent, splicedMachine } from '../../src/decode/event.ts';
import { withMachine } from '../../src/importers/machine.ts';

const NOW = '2026-01-01 00:00:00.000';
const deep = `${'{"a":'.repeat(200)}1${'}'.repeat(200)}`;
const event = `{"schema":"toolcanon.event/v1","type":"tool_call","harness":"claude_code","session_id":"s","call_id":"c","ts":"2026-01-01T00:00:00Z","tool":"Read","status":"ok","input":${deep}}`;
const machine = { host: 'desk "b"', device_id: 'dev-b' };

describe('a dead letter of a published line keeps the machine spliced in front of it', () => {
  it('too deep, cut off and oversized lines: the spliced machine', () => {
    const published = Buffer.from(withMachine(event, machine));
    expect(splicedMachine(published)).toEqual(machine);
    for (const [line, limits, reason] of [
      [published, undefined, 'too_deep'],
      [published.subarray(0, 300), undefined, 'invalid_json'],
      [published, { maxEventBytes: 100, maxDepth: 128 }, 'oversized'],
    ] as const) {
      const out = decodeEvent(line, 't/0/1', NOW, limits);
      expect(out.kind).toBe('dead');
      if (out.kind !== 'dead') continue;
      expect({ reason: out.dead.reason, host: out.dead.host, device_id: out.dead.device_id }).toEqual({ reason, ...machine });
    }
  });

  it('without the prefix: the caller\'s machine (consume: unknown); with a readable event: its own fields', () => {
    const out = decodeEvent(Buffer.from(event), 't/0/1', NOW);
    expect(out.kind === 'dead' && [out.dead.reason, out.dead.host, out.dead.device_id]).toEqual(['too_deep', '', '']);
    expect(splicedMachine(Buffer.from(`{"device_id":"x","host":"y",${event.slice(1)}`))).toBeUndefined();
    expect(splicedMachine(Buffer.from('[1]'))).toBeUndefined();
    const schema = decodeEvent(Buffer.from(withMachine('{"schema":"toolcanon.event/v1","type":"tool_call"}', machine)), 't/0/2', NOW);
    expect(schema.kind === 'dead' && [schema.dead.reason, schema.dead.host]).toEqual(['schema', machine.host]);
  });
});
