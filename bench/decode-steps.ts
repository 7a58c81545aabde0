// What decoding one event costs, step by step, against the JSON.parse baseline: each step adds
// one thing the contract requires of decoding, on the same in-memory lines (the bench/replay.ts
// events), so the increments show where decode's time goes and what a faster decode could still
// remove. The steps call the decoder's own parts; the last line is decodeEvent itself.
//   npx tsx bench/decode-steps.ts [N=50000] [rounds=7]
// A step's figure is the median of its rounds (the steps alternate within each round).
import { classifyContent } from '../src/accounting/content-class.ts';
import { contentEventId, decodeEvent, DEFAULT_LIMITS, identityEventId, nowClickHouseTime, toClickHouseTime, trimLine } from '../src/decode/event.ts';
import * as validators from '../src/decode/validators.generated.ts';
import { observeDiscovery } from '../src/discovery/discovery.ts';
import type { ToolCallRow } from '../src/model/records.ts';
import { redactCounted, redactJsonCounted, redactShortCounted } from '../src/redact/redact.ts';
import { projectToolCall } from '../src/transform/project.ts';
import { indexObject } from '../src/util/json-spans.ts';
import { multipliedEvents } from './fixtures.ts';

const N = Number(process.argv[2] ?? 50_000);
const ROUNDS = Number(process.argv[3] ?? 7);
const lines = multipliedEvents(N).map((l) => Buffer.from(l));
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
const at = nowClickHouseTime();

type Event = Record<string, unknown> & { type?: string; input?: unknown; output?: string; error?: string };
type Validate = (e: unknown) => boolean;
const validatorOf = (type: string | undefined): Validate => ((validators as Record<string, unknown>)[type ?? 'tool_call'] ?? validators.tool_call) as Validate;

/** Decoding cut after step `upTo` (1-7): what each step adds is read from the difference. */
function partial(bytes: Buffer, upTo: number): unknown {
  const line = trimLine(bytes);
  const text = utf8.decode(line); // 1: strict UTF-8 (invalid UTF-8 is a dead letter, not a replacement character)
  const index = upTo >= 2 ? indexObject(text) : undefined; // 2: the span scan (raw_input verbatim, the depth limit)
  const e = JSON.parse(text) as Event;
  if (upTo < 3) return index ?? e;
  if (!validatorOf(e.type)(e)) return e; // 3: schema validation
  if (upTo < 4) return e;
  const type = e.type ?? 'tool_call';
  const ts = toClickHouseTime(e['ts'] as string);
  // 4: the event id when the event has none (every line here)
  const id =
    type === 'tool_call' && e['call_id'] !== ''
      ? identityEventId(type, e['harness'] as string, e['session_id'] as string, (e['agent_id'] as string | undefined) ?? '', e['call_id'] as string)
      : type === 'usage'
        ? identityEventId(type, e['harness'] as string, e['session_id'] as string, (e['agent_id'] as string | undefined) ?? '', e['request_id'] as string)
        : contentEventId(e);
  if (upTo < 5 || type !== 'tool_call') return [id, ts];
  const span = index?.members.get('input');
  const wasString = typeof e.input === 'string';
  const input = wasString ? (e.input as string) : text.slice(span?.start ?? 0, span?.end ?? 0);
  // 5: redaction of what is stored
  const count = { count: 0 };
  const rawInput = wasString ? redactCounted(input, count) : redactJsonCounted(input, count);
  const error = e.error === undefined ? '' : redactCounted(e.error, count);
  const tool = redactShortCounted(e['tool'] as string, count);
  redactShortCounted(e['session_id'] as string, count);
  redactShortCounted((e['model'] as string | undefined) ?? '', count);
  redactShortCounted((e['turn_id'] as string | undefined) ?? '', count);
  redactCounted(e['call_id'] as string, count);
  if (upTo < 6) return [id, rawInput, error];
  // 6: the projection onto the canonical fields, and the sizes
  const p = projectToolCall(e['harness'] as ToolCallRow['harness'], tool, { text: rawInput, wasString });
  const sizes = Buffer.byteLength(input, 'utf8') + (e.output === undefined ? 0 : Buffer.byteLength(e.output, 'utf8'));
  if (upTo < 7) return [p, sizes];
  // 7: the output's content class (the estimate) and the discovery observation
  const cls = e.output === undefined ? 'empty' : classifyContent(e.output);
  const row = { event_id: id, ts, harness: e['harness'], session_id: e['session_id'], agent_id: '', turn_id: e['turn_id'] ?? '', call_id: e['call_id'], model: e['model'] ?? '', tool_name: p.toolName, kind: p.kind, namespace: p.namespace, status: e['status'], mcp_server: p.mcpServer, mcp_tool: p.mcpTool, host: '', device_id: '', source: 's', ingested_at: at } as unknown as ToolCallRow;
  return [cls, observeDiscovery(row, tool, e.output, e.error === undefined ? undefined : error)];
}

const STEPS: readonly { label: string; run: (b: Buffer, i: number) => unknown }[] = [
  { label: 'baseline: toString + JSON.parse', run: (b) => JSON.parse(b.toString('utf8')) },
  { label: '1 strict UTF-8 (TextDecoder, fatal)', run: (b) => partial(b, 1) },
  { label: '2 + span scan (raw_input, depth)', run: (b) => partial(b, 2) },
  { label: '3 + schema validation', run: (b) => partial(b, 3) },
  { label: '4 + event id (SHA-256)', run: (b) => partial(b, 4) },
  { label: '5 + secret redaction', run: (b) => partial(b, 5) },
  { label: '6 + projection, sizes', run: (b) => partial(b, 6) },
  { label: '7 + content class, discovery', run: (b) => partial(b, 7) },
  { label: 'decodeEvent (the whole decoder)', run: (b, i) => decodeEvent(b, `events.jsonl:${i + 1}`, at, DEFAULT_LIMITS) },
];

const times: number[][] = STEPS.map(() => []);
for (let r = 0; r < ROUNDS + 1; r++) {
  STEPS.forEach((s, k) => {
    const t = performance.now();
    for (let i = 0; i < lines.length; i++) s.run(lines[i] as Buffer, i);
    const us = ((performance.now() - t) * 1000) / N;
    if (r > 0) (times[k] as number[]).push(us); // round 0 warms the JIT
  });
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const m = times.map(median);
const base = m[0] as number;
console.log(`events: ${N} in memory (no read, no split), median of ${ROUNDS} rounds, µs an event`);
let previous = base;
STEPS.forEach((s, k) => {
  const v = m[k] as number;
  const step = k === 0 || k === STEPS.length - 1 ? '' : `  +${(v - previous).toFixed(2)}`;
  console.log(`${s.label.padEnd(40)} ${v.toFixed(2).padStart(6)}${step.padEnd(9)}  ${(base / v).toFixed(3)} of the baseline's speed`);
  if (k > 0 && k < STEPS.length - 1) previous = v;
});
const required = (m[STEPS.length - 2] as number);
console.log(`steps 1-7 (each required by the contract): ${required.toFixed(2)} µs = ${(required / base).toFixed(2)}x JSON.parse alone; they add ${(required - base).toFixed(2)} µs to it`);
console.log("(decode >= 0.5 in bench/replay.ts, where both sides also read and split, lets decoding add at most that run's baseline time)");
