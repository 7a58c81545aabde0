// Turns one Codebuff chat file (`chats/<chat id>/chat-messages.json`: a JSON array of messages,
// rewritten whole each turn) into usage events: one per assistant message (`variant` ai / agent /
// assistant, or `role` assistant) that carries usage — in `metadata.usage`, else
// `metadata.codebuff.usage`, else the last assistant entry of `metadata.runState…messageHistory`
// with `providerOptions.codebuff.usage`, each figure taken from the first place that has it (the
// readers' order). Tool calls are not read (see README.md). Every event ends at the file's end
// (completeBytes 0) under a stable id (the message's `id`, else its index): a re-read replaces.
import { indexArray } from '../../util/json-spans.ts';
import { normaliseTimestamp, stableEventId, usageEnvelope } from '../envelope.ts';
import { isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';
import { describeValue, MalformedRecords, readObject } from '../lines.ts';
import type { ImportedEvent, ParsedFile } from '../types.ts';
import { chatIdTime, sessionOf } from './paths.ts';

/** The usage figures of one place, and whether its input is OpenAI's (cache inside) or Anthropic's (cache apart). */
interface Figures {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  model?: string;
  /** The input came as `prompt_tokens` / `promptTokens`: OpenAI's total, the cached part inside. */
  inputHasCache?: boolean;
}

const INPUT_EXCLUSIVE = ['inputTokens', 'input_tokens'] as const;
const INPUT_TOTAL = ['promptTokens', 'prompt_tokens'] as const;
const OUTPUT = ['outputTokens', 'output_tokens', 'completionTokens', 'completion_tokens'] as const;
const CACHE_READ = ['cacheReadInputTokens', 'cache_read_input_tokens'] as const;
const CACHE_WRITE = ['cacheCreationInputTokens', 'cache_creation_input_tokens', 'cacheCreationTokens', 'cache_creation_tokens'] as const;

type Pick = { value?: number } | { fault: string };

function pick(o: JsonObject, keys: readonly string[], where: string): Pick {
  for (const k of keys) {
    const v = o[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return { fault: `\`${where}.${k}\` is ${describeValue(v)}, not a non-negative integer.` };
    if (v > 0) return { value: v };
  }
  return {};
}

/** The figures of a usage object, or what is wrong with one of them. */
function readUsageObject(v: unknown, where: string): Figures | { fault: string } | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) return { fault: `\`${where}\` is ${describeValue(v)}, not an object.` };
  const exclusive = pick(v, INPUT_EXCLUSIVE, where);
  const total = pick(v, INPUT_TOTAL, where);
  const output = pick(v, OUTPUT, where);
  const details = isObject(v['prompt_tokens_details']) ? pick(v['prompt_tokens_details'], ['cached_tokens'], `${where}.prompt_tokens_details`) : isObject(v['promptTokensDetails']) ? pick(v['promptTokensDetails'], ['cachedTokens'], `${where}.promptTokensDetails`) : {};
  const read = pick(v, CACHE_READ, where);
  const write = pick(v, CACHE_WRITE, where);
  for (const p of [exclusive, total, output, details, read, write]) if ('fault' in p) return { fault: p.fault };
  const f: Figures = {};
  const ev = (p: Pick): number | undefined => ('value' in p ? p.value : undefined);
  const inputExclusive = ev(exclusive);
  const inputTotal = ev(total);
  const out = ev(output);
  const written = ev(write);
  if (inputExclusive !== undefined) f.input = inputExclusive;
  else if (inputTotal !== undefined) {
    f.input = inputTotal;
    f.inputHasCache = true;
  }
  if (out !== undefined) f.output = out;
  const cached = Math.max(ev(read) ?? 0, ev(details) ?? 0);
  if (cached > 0) f.cacheRead = cached;
  if (written !== undefined) f.cacheWrite = written;
  if (typeof v['model'] === 'string' && v['model'] !== '' && v['model'].length <= MAX_ID_CHARS) f.model = v['model'];
  return f;
}

/** Fills what `target` lacks from `fallback` (the readers' merge). */
function merge(target: Figures, fallback: Figures): void {
  if (target.input === undefined && fallback.input !== undefined) {
    target.input = fallback.input;
    if (fallback.inputHasCache) target.inputHasCache = true;
  }
  if (target.output === undefined && fallback.output !== undefined) target.output = fallback.output;
  if (target.cacheRead === undefined && fallback.cacheRead !== undefined) target.cacheRead = fallback.cacheRead;
  if (target.cacheWrite === undefined && fallback.cacheWrite !== undefined) target.cacheWrite = fallback.cacheWrite;
  if (target.model === undefined && fallback.model !== undefined) target.model = fallback.model;
}

function historyOf(metadata: JsonObject): unknown[] | undefined {
  const rs = metadata['runState'];
  const ss = isObject(rs) ? rs['sessionState'] : undefined;
  const main = isObject(ss) ? ss['mainAgentState'] : undefined;
  const h = isObject(main) ? main['messageHistory'] : undefined;
  return Array.isArray(h) ? h : undefined;
}

function timeOf(m: JsonObject): string | undefined {
  for (const v of [m['timestamp'], m['createdAt'], isObject(m['metadata']) ? m['metadata']['timestamp'] : undefined]) {
    if (typeof v === 'string') {
      const t = normaliseTimestamp(v);
      if (t !== undefined) return t;
    }
    if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) {
      const ms = v < 10_000_000_000 ? v * 1000 : v;
      if (ms < 253402300800000) return new Date(ms).toISOString();
    }
  }
  return undefined;
}

const ASSISTANT = new Set(['ai', 'agent', 'assistant']);

/** Parses one chat file (read whole: readingOf says `document`). */
export function parseChatFile(path: string, data: Buffer): ParsedFile {
  const events: ImportedEvent[] = [];
  const malformed = new MalformedRecords();
  const skipped: Record<string, number> = {};
  const skip = (w: string): void => {
    skipped[w] = (skipped[w] ?? 0) + 1;
  };
  const original = data.toString('utf8');
  const text = original.charCodeAt(0) === 0xfeff ? original.slice(1) : original;
  if (text.trim() === '') return { events, malformed: [], completeBytes: 0, recordsRead: 0, skipped: { empty_document: 1 } };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const r = readObject(text);
    return { events, malformed: [{ raw: original, line: 1, problem: 'invalid_json', detail: r.ok ? 'The document is not valid JSON.' : r.detail, endOffset: data.length }], completeBytes: 0, recordsRead: 1, skipped };
  }
  const spans = indexArray(text);
  if (!Array.isArray(value) || spans === undefined || spans.length !== value.length) {
    return { events, malformed: [{ raw: original, line: 1, problem: 'not_an_array', detail: `The document is JSON but ${describeValue(value)}, not the array of messages Codebuff writes.`, endOffset: data.length }], completeBytes: 0, recordsRead: 1, skipped };
  }
  const { sessionId, chatId } = sessionOf(path);
  const chatTime = chatIdTime(chatId);
  const seen = new Set<string>();
  let lineNo = 1;
  let counted = 0;
  spans.forEach((span, index) => {
    for (let i = counted; i < span.start; i++) if (text.charCodeAt(i) === 0x0a) lineNo++;
    counted = span.start;
    const raw = text.slice(span.start, span.end);
    const bad = (problem: string, detail: string): void => malformed.add({ raw, line: lineNo, problem, detail, endOffset: data.length });
    const m = (value as unknown[])[index];
    if (!isObject(m)) return bad('not_an_object', `The message is ${describeValue(m)}, not an object.`);
    const kind = typeof m['variant'] === 'string' ? m['variant'] : m['role'];
    if (typeof kind !== 'string' || !ASSISTANT.has(kind)) return skip(typeof kind === 'string' ? `message:${kind.slice(0, 32)}` : 'message:unknown');
    const figures: Figures = {};
    const metadata = isObject(m['metadata']) ? m['metadata'] : undefined;
    if (metadata !== undefined) {
      if (typeof metadata['model'] === 'string' && metadata['model'] !== '' && metadata['model'].length <= MAX_ID_CHARS) figures.model = metadata['model'];
      const places: [unknown, string][] = [[metadata['usage'], 'metadata.usage'], [isObject(metadata['codebuff']) ? metadata['codebuff']['usage'] : undefined, 'metadata.codebuff.usage']];
      for (const [v, where] of places) {
        const f = readUsageObject(v, where);
        if (f !== undefined && 'fault' in f) return bad('malformed:usage', f.fault);
        if (f !== undefined) merge(figures, f);
      }
      const history = historyOf(metadata);
      for (const entry of [...(history ?? [])].reverse()) {
        if (!isObject(entry) || entry['role'] !== 'assistant' || !isObject(entry['providerOptions'])) continue;
        const po = entry['providerOptions'];
        const cb = isObject(po['codebuff']) ? po['codebuff'] : undefined;
        const f = readUsageObject(cb?.['usage'] ?? po['usage'], 'metadata.runState…providerOptions.codebuff.usage');
        if (f !== undefined && 'fault' in f) return bad('malformed:usage', f.fault);
        const e: Figures = f ?? {};
        if (cb !== undefined && typeof cb['model'] === 'string' && cb['model'] !== '' && cb['model'].length <= MAX_ID_CHARS) e.model = cb['model'];
        merge(figures, e);
      }
    }
    const input = figures.input ?? 0;
    const cacheRead = figures.cacheRead ?? 0;
    if (input === 0 && (figures.output ?? 0) === 0 && cacheRead === 0 && (figures.cacheWrite ?? 0) === 0) return skip('assistant_without_usage');
    const ts = timeOf(m) ?? chatTime;
    if (ts === undefined) return bad('no_time', 'The message has no `timestamp`, `createdAt` or `metadata.timestamp`, and the chat id names no time.');
    const id = typeof m['id'] === 'string' && m['id'] !== '' && m['id'].length <= MAX_ID_CHARS ? m['id'] : `#${index}`;
    if (seen.has(id)) return skip('repeated_message');
    seen.add(id);
    events.push({
      envelope: usageEnvelope({
        event_id: stableEventId('codebuff', sessionId, 'usage', id),
        ts,
        harness: 'codebuff',
        session_id: sessionId,
        ...(figures.model === undefined ? {} : { model: figures.model }),
        request_id: id,
        // USAGE_CONVENTIONS.codebuff: an OpenAI-style prompt_tokens holds the cached part; written without it.
        input_tokens: figures.inputHasCache ? Math.max(0, input - cacheRead) : input,
        output_tokens: figures.output ?? 0,
        cache_read_tokens: cacheRead,
        cache_write_tokens: figures.cacheWrite ?? 0,
      }),
      source: `${path}:${lineNo}`,
      endOffset: data.length,
    });
  });
  return { events, malformed: malformed.records, completeBytes: 0, recordsRead: spans.length, skipped };
}
