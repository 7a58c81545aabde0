// Turns one Amp thread file (`threads/T-<uuid>.json`: one JSON document, rewritten whole at every
// change) into toolcanon events: a usage per assistant message with `usage` (one model request),
// a tool_call per `tool_use` block joined to the `tool_result` block of the same id in a later
// user message. The document may change anywhere when rewritten (a streaming message completes,
// a result arrives), so every event ends at the file's end and completeBytes is 0: a changed
// file is read again whole, and its events, whose ids are stable (thread id + messageId, thread
// id + tool use id), replace the earlier ones instead of adding to them. A message that cannot
// be read is a malformed record at its line; never throws.
import { basename } from 'node:path';
import { DEFAULT_LIMITS } from '../../decode/limits.ts';
import { indexArray, findSpan, skipValue } from '../../util/json-spans.ts';
import { errorSummary, normaliseTimestamp, stableEventId, type RawToolInput, type ToolCallFields, toolCallEnvelopeWithin, usageEnvelope, type Envelope } from '../envelope.ts';
import { idMember, isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';
import { describeValue, MalformedRecords, readObject } from '../lines.ts';
import type { ImportedEvent, ParsedFile } from '../types.ts';
import { FAILED_STATUSES, foldsCacheCreationIntoInput, readUsage, resultCallId, resultText } from './types.ts';

const MAX_INPUT_DEPTH = DEFAULT_LIMITS.maxDepth - 1;

/** One message of the thread's `messages` array, with the line it starts at. */
interface Element {
  readonly index: number;
  readonly text: string;
  readonly lineNo: number;
  readonly value: unknown;
}

interface Call {
  readonly id: string;
  readonly name: string;
  readonly input: RawToolInput;
  readonly ts: string;
  readonly turnId: string;
  readonly model: string | undefined;
  readonly e: Element;
}

interface Outcome {
  readonly status: 'ok' | 'error' | 'pending';
  readonly output?: string;
  readonly error?: string;
  readonly at?: string;
}

function msTime(v: unknown): string | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 && v < 253402300800000 ? new Date(Math.floor(v)).toISOString() : undefined;
}

/** The thread id: the document's `id`, else the file name without `.json`. */
function threadIdOf(doc: JsonObject, path: string): string {
  return idMember(doc, 'id') ?? (basename(path).replace(/\.json$/, '').slice(0, MAX_ID_CHARS) || 'unknown');
}

class ThreadFile {
  readonly events: ImportedEvent[] = [];
  readonly malformed = new MalformedRecords();
  readonly skipped: Record<string, number> = {};
  threadId = 'unknown';
  created: string | undefined;

  constructor(
    readonly path: string,
    readonly data: Buffer,
  ) {}

  skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  bad(raw: string, lineNo: number, problem: string, detail: string): void {
    this.malformed.add({ raw, line: lineNo, problem, detail, endOffset: this.data.length });
  }

  emit(envelope: Envelope, e: Element): void {
    this.events.push({ envelope, source: `${this.path}:${e.lineNo}`, endOffset: this.data.length });
  }

  /** The thread's messages, or undefined after a malformed record for the whole document. */
  messages(): Element[] | undefined {
    const original = this.data.toString('utf8');
    const text = original.charCodeAt(0) === 0xfeff ? original.slice(1) : original;
    if (text.trim() === '') {
      this.skip('empty_document');
      return undefined;
    }
    // Amp writes the file whole: a document that does not parse is damaged, one malformed record.
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      const reading = readObject(text);
      this.bad(original, 1, 'invalid_json', reading.ok ? 'The document is not valid JSON.' : reading.detail);
      return undefined;
    }
    const span = isObject(doc) && Array.isArray(doc['messages']) ? findSpan(text, ['messages']) : undefined;
    const spans = span === undefined ? undefined : indexArray(text, span.start);
    if (!isObject(doc) || !Array.isArray(doc['messages']) || spans === undefined || spans.length !== doc['messages'].length) {
      this.bad(original, 1, 'not_a_thread', isObject(doc) ? `\`messages\` is ${describeValue(doc['messages'])}, not the array of messages a thread holds.` : `The document is JSON but ${describeValue(doc)}, not a thread object.`);
      return undefined;
    }
    this.threadId = threadIdOf(doc, this.path);
    this.created = msTime(doc['created']);
    if (isObject(doc['usageLedger'])) this.skip('usage_ledger');
    const values = doc['messages'] as unknown[];
    let lineNo = 1;
    let counted = 0;
    return spans.map((s, index): Element => {
      for (let i = counted; i < s.start; i++) if (text.charCodeAt(i) === 0x0a) lineNo++;
      counted = s.start;
      return { index, text: text.slice(s.start, s.end), lineNo, value: values[index] };
    });
  }
}

function readThread(f: ThreadFile, elements: readonly Element[]): void {
  const calls = new Map<string, Call>();
  const outcomes = new Map<string, Outcome>();
  const usageKeys = new Set<string>();
  let turnId = '';
  for (const e of elements) {
    const m = e.value;
    if (!isObject(m)) {
      f.bad(e.text, e.lineNo, 'not_an_object', `The message is ${describeValue(m)}, not an object.`);
      continue;
    }
    const role = m['role'];
    // Amp writes content as blocks; a plain string (other writers) is text without blocks.
    const content = typeof m['content'] === 'string' ? [] : (m['content'] ?? []);
    if (typeof role !== 'string' || !Array.isArray(content)) {
      f.bad(e.text, e.lineNo, 'malformed:message', typeof role !== 'string' ? `\`role\` is ${describeValue(role)}, not a string.` : `\`content\` is ${describeValue(content)}, not an array.`);
      continue;
    }
    const messageId = typeof m['messageId'] === 'number' && Number.isSafeInteger(m['messageId']) ? String(m['messageId']) : idMember(m, 'messageId') ?? `#${e.index}`;
    const meta = isObject(m['meta']) ? m['meta'] : {};
    const sentAt = msTime(meta['sentAt']);
    if (role === 'user') {
      let results = 0;
      for (const b of content) {
        if (!isObject(b) || b['type'] !== 'tool_result') continue;
        results++;
        const id = resultCallId(b);
        if (typeof id !== 'string' || id === '' || id.length > MAX_ID_CHARS) {
          f.bad(e.text, e.lineNo, 'malformed:tool_result', `\`toolUseID\` is ${describeValue(id)}, not a tool use id.`);
          continue;
        }
        const run = isObject(b['run']) ? b['run'] : {};
        const status = typeof run['status'] === 'string' ? run['status'] : 'done';
        const out = resultText(run['result'] ?? b['content']);
        const err = isObject(run['error']) && typeof run['error']['message'] === 'string' ? run['error']['message'] : undefined;
        const at = sentAt;
        if (status === 'done') outcomes.set(id, { status: 'ok', ...(out === undefined ? {} : { output: out }), ...(at === undefined ? {} : { at }) });
        else if (FAILED_STATUSES.has(status)) {
          const said = errorSummary(err ?? out ?? '');
          outcomes.set(id, { status: 'error', ...(out === undefined ? {} : { output: out }), error: said === '' ? status : status === 'error' ? said : `${status}: ${said}`, ...(at === undefined ? {} : { at }) });
        } else outcomes.set(id, { status: 'pending' });
      }
      // A message with text (not only results) is a prompt: it starts a turn.
      if (results === 0) turnId = `${f.threadId}#${messageId}`;
      f.skip(results === 0 ? 'user_prompt' : 'tool_results');
      continue;
    }
    if (role !== 'assistant') {
      f.skip(`message:${role.slice(0, 64)}`);
      continue;
    }
    const usage = m['usage'] === undefined || m['usage'] === null ? undefined : readUsage(m['usage'], 'usage');
    if (usage !== undefined && 'fault' in usage) {
      f.bad(e.text, e.lineNo, 'malformed:usage', usage.fault);
      continue;
    }
    const ts = normaliseTimestamp(usage?.timestamp) ?? sentAt ?? f.created;
    const model = usage?.model ?? (typeof m['model'] === 'string' && m['model'] !== '' && m['model'].length <= MAX_ID_CHARS ? m['model'] : undefined);
    const uses = content.filter((b): b is JsonObject => isObject(b) && b['type'] === 'tool_use');
    if (usage === undefined && uses.length === 0) {
      f.skip('assistant_without_usage_or_tool_use');
      continue;
    }
    if (ts === undefined) {
      f.bad(e.text, e.lineNo, 'no_time', 'The message has no `usage.timestamp` or `meta.sentAt`, and the thread no `created` time: it cannot be placed in time.');
      continue;
    }
    if (usage !== undefined) {
      const zero = usage.input === 0 && usage.output === 0 && usage.cacheRead === 0 && usage.cacheCreation === 0;
      if (zero) f.skip('usage_zero');
      else if (usageKeys.has(messageId)) f.skip('repeated_usage');
      else {
        usageKeys.add(messageId);
        const folds = foldsCacheCreationIntoInput(model);
        f.emit(usageEnvelope({
          event_id: stableEventId('amp', f.threadId, 'usage', messageId),
          ts,
          harness: 'amp',
          session_id: f.threadId,
          ...(turnId === '' ? {} : { turn_id: turnId }),
          ...(model === undefined ? {} : { model }),
          request_id: messageId,
          // USAGE_CONVENTIONS.amp: input excludes the cache; gpt-* threads log the uncached prompt as cache creation.
          input_tokens: folds ? usage.input + usage.cacheCreation : usage.input,
          output_tokens: usage.output,
          cache_read_tokens: usage.cacheRead,
          cache_write_tokens: folds ? 0 : usage.cacheCreation,
        }), e);
      }
    }
    for (const b of uses) {
      const id = idMember(b, 'id');
      const name = b['name'];
      if (id === undefined || typeof name !== 'string' || name === '' || name.length > MAX_ID_CHARS) {
        f.bad(e.text, e.lineNo, 'malformed:tool_use', id === undefined ? `\`tool_use.id\` is ${describeValue(b['id'])}, not a tool use id.` : `\`tool_use.name\` is ${describeValue(name)}, not a tool name.`);
        continue;
      }
      if (calls.has(id)) {
        f.skip('repeated_tool_use');
        continue;
      }
      let input: RawToolInput = { json: '{}' };
      if (isObject(b['input'])) {
        const at = content.indexOf(b);
        const span = findSpan(e.text, ['content', at, 'input']);
        if (span !== undefined) {
          const depth = skipValue(e.text, span.start).depth;
          if (depth > MAX_INPUT_DEPTH) {
            f.bad(e.text, e.lineNo, 'too_deep', `\`content[${at}].input\` is nested ${depth} levels deep, more than the ${MAX_INPUT_DEPTH} an event takes.`);
            continue;
          }
          input = { json: e.text.slice(span.start, span.end) };
        }
      } else if (typeof b['input'] === 'string') input = { string: b['input'] };
      calls.set(id, { id, name, input, ts, turnId, model, e });
    }
  }
  for (const call of calls.values()) {
    const o = outcomes.get(call.id);
    const d = o?.at === undefined ? NaN : Date.parse(o.at) - Date.parse(call.ts);
    const fields: ToolCallFields = {
      event_id: stableEventId('amp', f.threadId, 'tool', call.id),
      ts: call.ts,
      harness: 'amp',
      session_id: f.threadId,
      ...(call.turnId === '' ? {} : { turn_id: call.turnId }),
      call_id: call.id,
      ...(call.model === undefined ? {} : { model: call.model }),
      tool: call.name,
      status: o?.status ?? 'pending',
      ...(o?.output === undefined ? {} : { output: o.output }),
      ...(o?.error === undefined ? {} : { error: o.error }),
      ...(Number.isSafeInteger(d) && d >= 0 ? { duration_ms: d } : {}),
    };
    const { envelope, truncated } = toolCallEnvelopeWithin(fields, call.input);
    if (truncated) f.skip('output_truncated');
    f.emit(envelope, call.e);
  }
}

/** Parses one thread document (read whole: readingOf says `document`). */
export function parseThreadFile(path: string, data: Buffer): ParsedFile {
  const f = new ThreadFile(path, data);
  const elements = f.messages();
  if (elements !== undefined) readThread(f, elements);
  return { events: f.events, malformed: f.malformed.records, completeBytes: 0, recordsRead: elements?.length ?? 1, skipped: f.skipped };
}
