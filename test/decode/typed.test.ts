// An importer's typed event decodes to exactly what its line decodes to (issue 31 step 4: events
// reach the decoder as typed fields, not as text parsed again). Judged against decodeEvent on
// the line, over every importer's fixtures, the shared corpus and the edges where only the line
// can tell (those must take the line, and give the same outcome); and the typed events of the
// fixtures must not make their lines at all.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeEnvelope, decodeEvent, DEFAULT_LIMITS, type DecodeLimits, type DecodeOutcome } from '../../src/decode/event.ts';
import type { TypedEvent } from '../../src/decode/typed.ts';
import { Envelope, toolCallEnvelope, usageEnvelope, type RawToolInput, type ToolCallFields, type UsageFields } from '../../src/importers/envelope.ts';
import { loadImporter } from '../../src/importers/registry.ts';
import { IMPORTER_IDS } from '../../src/importers/types.ts';
import { sampleFiles } from '../helpers/importer-samples.ts';

const AT = '2026-12-02 10:00:01.000';
const MACHINE = { host: 'laptop', device_id: 'dev-1' };
const LIMITS: readonly DecodeLimits[] = [DEFAULT_LIMITS, { ...DEFAULT_LIMITS, redact: false }, { ...DEFAULT_LIMITS, machine: MACHINE }];
/** The typed event, counting the lines it is asked to make. */
function counted(envelope: Envelope): { typed: TypedEvent; lines: () => number } {
  let lines = 0;
  const typed: TypedEvent = {
    event: envelope.event,
    mostBytes: envelope.mostBytes,
    chars: envelope.chars,
    get text() {
      lines++;
      return envelope.text;
    },
  };
  return { typed, lines: () => lines };
}

/** Both decodes of one typed event agree; returns how many lines the typed decode made. */
function expectSame(envelope: Envelope, source: string, limits: DecodeLimits): { outcome: DecodeOutcome; lines: number } {
  const { typed, lines } = counted(envelope);
  const outcome = decodeEnvelope(typed, source, AT, limits);
  const made = lines();
  expect(outcome).toEqual(decodeEvent(Buffer.from(envelope.text, 'utf8'), source, AT, limits));
  return { outcome, lines: made };
}

describe('typed importer events decode as their lines do', () => {
  it.each(IMPORTER_IDS.map((id) => [id]))('%s: every fixture event, redacted, kept and with a machine, without making a line', async (id) => {
    const importer = await loadImporter(id);
    let events = 0;
    let typedLines = 0;
    let lineEvents = 0;
    let deadOrRaw = 0;
    const files = sampleFiles(importer, 'the typed decode of the corpus samples (test/decode/typed.test.ts)');
    if (files === null) return;
    for (const file of files) {
      for (const e of importer.parseFile(file, readFileSync(file)).events) {
        events++;
        if (e.envelope.event.type === 'line') lineEvents++;
        for (const limits of LIMITS) {
          const { outcome, lines } = expectSame(e.envelope, e.source, limits);
          if (outcome.kind === 'dead') deadOrRaw++;
          else if (e.envelope.event.type !== 'line') typedLines += lines;
        }
      }
    }
    expect(events, `no fixture events for ${id}`).toBeGreaterThan(0);
    // Only an MCP event (made as its line) or a dead letter (its bytes are the line's) needs one.
    expect(typedLines).toBe(0);
    expect(deadOrRaw).toBeLessThanOrEqual(LIMITS.length * (events - lineEvents));
  });
});

const CALL: ToolCallFields = {
  event_id: 'e-1',
  ts: '2026-12-02T10:00:00.123456Z',
  harness: 'claude_code',
  session_id: 'sess-1',
  turn_id: 't-1',
  call_id: 'call-1',
  model: 'claude-sonnet-4-5',
  tool: 'Bash',
  status: 'ok',
  output: 'done\n',
  duration_ms: 12,
};
const USAGE: UsageFields = {
  event_id: 'u-1',
  ts: '2026-12-02T10:00:00Z',
  harness: 'codex',
  session_id: 'sess-1',
  request_id: 'r-1',
  model: 'gpt-5',
  input_tokens: 1200,
  output_tokens: 30,
  cache_read_tokens: 1000,
};

describe('the edges: only the line can tell, so the line is decoded, to the same outcome', () => {
  const cases: [string, Envelope, DecodeLimits, 'typed' | 'line'][] = [
    ['an object input', toolCallEnvelope(CALL, { json: '{"command":"ls -la","timeout":1e3,"big":12345678901234567890}' }), DEFAULT_LIMITS, 'typed'],
    ['a string input holding JSON with escapes', toolCallEnvelope(CALL, { string: '{"a":"b\\"c","p":"/x"}' }), DEFAULT_LIMITS, 'typed'],
    ['a secret in the input and the output', toolCallEnvelope({ ...CALL, output: 'key AKIAIOSFODNN7EXAMPLE' }, { json: '{"env":{"OPENAI_API_KEY":"sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"}}' }), DEFAULT_LIMITS, 'typed'],
    ['a usage', usageEnvelope(USAGE), DEFAULT_LIMITS, 'typed'],
    ['optional fields left undefined', toolCallEnvelope({ ...CALL, agent_id: undefined, model: undefined, duration_ms: undefined } as unknown as ToolCallFields, { json: '{}' }), DEFAULT_LIMITS, 'typed'],
    ['an input with a lone surrogate (the line\'s UTF-8 makes it U+FFFD)', toolCallEnvelope(CALL, { json: '{"p":"a\ud800b"}' }), DEFAULT_LIMITS, 'line'],
    ['an input with space around it', toolCallEnvelope(CALL, { json: ' {"a":1} ' }), DEFAULT_LIMITS, 'line'],
    ['an input that is not JSON', toolCallEnvelope(CALL, { json: '{"a":' }), DEFAULT_LIMITS, 'line'],
    ['an input that is two objects', toolCallEnvelope(CALL, { json: '{"a":1}{"b":2}' }), DEFAULT_LIMITS, 'line'],
    ['an input that is an array', toolCallEnvelope(CALL, { json: '[1]' } as RawToolInput), DEFAULT_LIMITS, 'line'],
    ['an input deeper than --max-depth', toolCallEnvelope(CALL, { json: '{"a":{"b":{"c":{}}}}' }), { ...DEFAULT_LIMITS, maxDepth: 4 }, 'line'],
    ['an input as deep as --max-depth', toolCallEnvelope(CALL, { json: '{"a":{"b":{}}}' }), { ...DEFAULT_LIMITS, maxDepth: 4 }, 'typed'],
    ['a duration that is not a number JSON writes', toolCallEnvelope({ ...CALL, duration_ms: Number.NaN }, { json: '{}' }), DEFAULT_LIMITS, 'line'],
    ['a usage figure beyond 2^53', usageEnvelope({ ...USAGE, input_tokens: 2 ** 60 }), DEFAULT_LIMITS, 'line'],
    ['a negative figure (schema)', usageEnvelope({ ...USAGE, output_tokens: -1 }), DEFAULT_LIMITS, 'line'],
    ['a date that does not exist', toolCallEnvelope({ ...CALL, ts: '2026-02-30T00:00:00Z' }, { json: '{}' }), DEFAULT_LIMITS, 'line'],
    ['an unknown harness', toolCallEnvelope({ ...CALL, harness: 'nobody' as ToolCallFields['harness'] }, { json: '{}' }), DEFAULT_LIMITS, 'line'],
    ['a call near --max-event-bytes', toolCallEnvelope({ ...CALL, output: 'x'.repeat(400) }, { json: '{}' }), { ...DEFAULT_LIMITS, maxEventBytes: 900 }, 'line'],
    ['a call over --max-event-bytes', toolCallEnvelope({ ...CALL, output: 'x'.repeat(1000) }, { json: '{}' }), { ...DEFAULT_LIMITS, maxEventBytes: 900 }, 'line'],
    ['an MCP event made as its line', new Envelope({ type: 'line', line: '{"schema":"toolcanon.event/v1","type":"mcp_status","ts":"2026-12-02T10:00:00Z","harness":"claude_code","session_id":"s","server":"gh","client_id":"c","transport":"stdio","state":"connected"}' }), DEFAULT_LIMITS, 'line'],
  ];
  it.each(cases)('%s', (_name, envelope, limits, path) => {
    const { lines } = expectSame(envelope, 'test:1', limits);
    if (path === 'typed') expect(lines).toBe(0);
    else expect(lines).toBeGreaterThan(0);
  });

  it('a typed event\'s line is made once and kept', () => {
    const e = toolCallEnvelope(CALL, { json: '{"a":1}' });
    expect(e.text).toBe(e.text);
    expect(JSON.parse(e.text)).toMatchObject({ schema: 'toolcanon.event/v1', type: 'tool_call', input: { a: 1 } });
    expect(e.mostBytes).toBeGreaterThanOrEqual(Buffer.byteLength(e.text, 'utf8'));
    const wide = toolCallEnvelope({ ...CALL, output: '\u0001é'.repeat(100) }, { string: '\u0002'.repeat(50) });
    expect(wide.mostBytes).toBeGreaterThanOrEqual(Buffer.byteLength(wide.text, 'utf8'));
  });
});
