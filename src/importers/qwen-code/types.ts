// The Qwen Code chat records the importer reads (`ChatRecord` in QwenLM/qwen-code
// packages/core/src/services/chatRecordingService.ts), narrowed from `unknown`: each reader
// returns the record or a sentence naming the field that kept it from being one.
import { describeValue } from '../lines.ts';
import { idFault, idMember, isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';

/** `ChatRecord.type`: what the recorder writes (user input, a model response, a tool result, a system event). */
export const RECORD_TYPES = ['user', 'assistant', 'tool_result', 'system'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

export function isRecordType(v: unknown): v is RecordType {
  return typeof v === 'string' && (RECORD_TYPES as readonly string[]).includes(v);
}

// ------------------------------------------------------------------------- usage

/**
 * `usageMetadata`, Gemini's GenerateContentResponseUsageMetadata as Qwen Code's converters fill
 * it. On the OpenAI-compatible path (converter.ts): promptTokenCount = prompt_tokens (cached
 * tokens inside), candidatesTokenCount = completion_tokens (reasoning inside),
 * cachedContentTokenCount = prompt_tokens_details.cached_tokens, thoughtsTokenCount =
 * completion_tokens_details.reasoning_tokens (or an estimate bounded by the completion
 * tokens), totalTokenCount = total_tokens. On the Gemini path the thoughts are apart from the
 * candidates and the total is their sum with the tool-use prompt tokens.
 */
export interface UsageFigures {
  readonly prompt: number;
  readonly candidates: number;
  readonly cached: number;
  readonly thoughts: number;
  readonly toolUsePrompt: number;
  /** totalTokenCount, or undefined when absent. */
  readonly total: number | undefined;
}

function count(o: JsonObject, key: string): number | undefined | 'bad' {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 'bad';
}

const USAGE_KEYS = ['promptTokenCount', 'candidatesTokenCount', 'cachedContentTokenCount', 'thoughtsTokenCount', 'toolUsePromptTokenCount', 'totalTokenCount'] as const;

/**
 * The figures, `'no_breakdown'` for a usage that has a total but neither prompt nor candidates
 * (the converter leaves both out when the provider reported only a total), or a fault sentence.
 */
export function readUsage(v: unknown): UsageFigures | 'no_breakdown' | { readonly fault: string } {
  if (!isObject(v)) return { fault: `\`usageMetadata\` is ${describeValue(v)}, not an object.` };
  const got: Partial<Record<(typeof USAGE_KEYS)[number], number>> = {};
  for (const key of USAGE_KEYS) {
    const n = count(v, key);
    if (n === 'bad') return { fault: `\`usageMetadata.${key}\` is ${describeValue(v[key])}, not a non-negative integer.` };
    if (n !== undefined) got[key] = n;
  }
  if (got.promptTokenCount === undefined && got.candidatesTokenCount === undefined) {
    if (got.totalTokenCount !== undefined) return 'no_breakdown';
    return { fault: '`usageMetadata` has neither `promptTokenCount` nor `candidatesTokenCount` nor `totalTokenCount`.' };
  }
  const figures: UsageFigures = {
    prompt: got.promptTokenCount ?? 0,
    candidates: got.candidatesTokenCount ?? 0,
    cached: got.cachedContentTokenCount ?? 0,
    thoughts: got.thoughtsTokenCount ?? 0,
    toolUsePrompt: got.toolUsePromptTokenCount ?? 0,
    total: got.totalTokenCount,
  };
  if (figures.cached > figures.prompt) return { fault: `\`usageMetadata.cachedContentTokenCount\` (${figures.cached}) exceeds \`promptTokenCount\` (${figures.prompt}), which includes it.` };
  if (!Number.isSafeInteger(figures.prompt + figures.toolUsePrompt) || !Number.isSafeInteger(figures.candidates + figures.thoughts)) return { fault: '`usageMetadata` figures add up beyond 2^53 - 1.' };
  return figures;
}

/**
 * Whether the thoughts are apart from the candidates (the Gemini path): the total is then
 * prompt + candidates + thoughts + tool-use prompt. On the OpenAI-compatible path the total is
 * prompt + completion, the thoughts already inside the completion.
 */
export function thoughtsApart(u: UsageFigures): boolean {
  return u.thoughts > 0 && u.total !== undefined && u.total === u.prompt + u.candidates + u.thoughts + u.toolUsePrompt;
}

// ------------------------------------------------------------------------- calls and results

/** A `functionCall` part of an assistant record's `message.parts`. */
export interface FunctionCall {
  readonly id: string;
  readonly name: string;
  /** The part's index in `message.parts` (where its `args` text is). */
  readonly partIndex: number;
  /** Whether `args` is an object (absent: the call took no arguments). */
  readonly hasArgs: boolean;
}

/** The `functionCall` parts of `message.parts`, each one or the fault that keeps it from being one. */
export function functionCallsOf(message: unknown): (FunctionCall | { readonly fault: string })[] {
  if (!isObject(message) || !Array.isArray(message['parts'])) return [];
  const out: (FunctionCall | { readonly fault: string })[] = [];
  (message['parts'] as readonly unknown[]).forEach((part, partIndex) => {
    if (!isObject(part) || part['functionCall'] === undefined) return;
    const fc = part['functionCall'];
    const where = `message.parts[${partIndex}].functionCall.`;
    if (!isObject(fc)) return out.push({ fault: `\`message.parts[${partIndex}].functionCall\` is ${describeValue(fc)}, not an object.` });
    const id = idMember(fc, 'id');
    if (id === undefined) return out.push({ fault: idFault(fc, 'id', where) });
    const name = idMember(fc, 'name');
    if (name === undefined) return out.push({ fault: idFault(fc, 'name', where) });
    const args = fc['args'];
    if (args !== undefined && args !== null && !isObject(args)) return out.push({ fault: `\`${where}args\` is ${describeValue(args)}, not an object.` });
    out.push({ id, name, partIndex, hasArgs: isObject(args) });
  });
  return out;
}

/** `ToolCallResponseInfo.status` as the scheduler sets it (coreToolScheduler's `Status`). */
export const FINAL_STATUSES = ['success', 'error', 'cancelled'] as const;
export const RUNNING_STATUSES = ['validating', 'scheduled', 'executing', 'awaiting_approval'] as const;
export type ToolStatus = (typeof FINAL_STATUSES)[number] | (typeof RUNNING_STATUSES)[number];

function isToolStatus(v: unknown): v is ToolStatus {
  return typeof v === 'string' && ([...FINAL_STATUSES, ...RUNNING_STATUSES] as readonly string[]).includes(v);
}

/** What a `tool_result` record says about its call. */
export interface ToolResult {
  readonly callId: string;
  /** toolCallResult.status; undefined when the record has none (then read from the response). */
  readonly status: ToolStatus | undefined;
  /** The text the model was given: each functionResponse `output` (else `error`), and text parts. */
  readonly text: string | undefined;
  /** The first `response.error` text, else a string `resultDisplay`, else the `errorType`. */
  readonly error: string | undefined;
  readonly images: number;
}

function isImagePart(part: JsonObject): boolean {
  for (const key of ['inlineData', 'fileData']) {
    const data = part[key];
    if (isObject(data)) return typeof data['mimeType'] !== 'string' || data['mimeType'].startsWith('image/');
  }
  return false;
}

/**
 * Reads a tool_result record: `toolCallResult {callId, status, resultDisplay, errorType}` and
 * the `message.parts` holding `functionResponse {id, name, response: {output} | {error}}`. The
 * call id is `toolCallResult.callId`, else the first functionResponse's id.
 */
export function readToolResult(o: JsonObject): ToolResult | { readonly fault: string } {
  const tcr = o['toolCallResult'];
  if (tcr !== undefined && tcr !== null && !isObject(tcr)) return { fault: `\`toolCallResult\` is ${describeValue(tcr)}, not an object.` };
  const message = o['message'];
  const parts: readonly unknown[] = isObject(message) && Array.isArray(message['parts']) ? (message['parts'] as readonly unknown[]) : [];
  const responses = parts.filter((p): p is JsonObject => isObject(p) && isObject(p['functionResponse'])).map((p) => p['functionResponse'] as JsonObject);
  let callId = isObject(tcr) ? idMember(tcr, 'callId') : undefined;
  if (callId === undefined && isObject(tcr) && tcr['callId'] !== undefined) return { fault: idFault(tcr, 'callId', 'toolCallResult.') };
  callId ??= responses.map((r) => idMember(r, 'id')).find((id) => id !== undefined);
  if (callId === undefined) return { fault: '`toolCallResult.callId` is missing and no `functionResponse` part has an `id`: the result names no call.' };
  const rawStatus = isObject(tcr) ? tcr['status'] : undefined;
  if (rawStatus !== undefined && rawStatus !== null && !isToolStatus(rawStatus)) return { fault: `\`toolCallResult.status\` is ${describeValue(rawStatus)}, not one of ${[...FINAL_STATUSES, ...RUNNING_STATUSES].join(', ')}.` };
  const texts: string[] = [];
  let error: string | undefined;
  let images = 0;
  for (const part of parts) {
    if (!isObject(part)) continue;
    const fr = part['functionResponse'];
    if (isObject(fr)) {
      // A response of another call (a batch written together) is not this call's output.
      const id = idMember(fr, 'id');
      if (id !== undefined && id !== callId) continue;
      const response = fr['response'];
      if (isObject(response)) {
        const output = response['output'];
        const err = response['error'];
        if (typeof output === 'string') texts.push(output);
        if (typeof err === 'string') {
          error ??= err;
          if (typeof output !== 'string') texts.push(err);
        } else if (isObject(err) && typeof err['message'] === 'string') error ??= err['message'];
        if (typeof output !== 'string' && typeof err !== 'string') texts.push(JSON.stringify(response));
      }
      const nested = fr['parts'];
      if (Array.isArray(nested)) images += (nested as readonly unknown[]).filter((p) => isObject(p) && isImagePart(p)).length;
      continue;
    }
    if (typeof part['text'] === 'string') texts.push(part['text']);
    else if (isImagePart(part)) images++;
  }
  if (error === undefined && isObject(tcr)) {
    const display = tcr['resultDisplay'];
    const errorType = tcr['errorType'];
    if (rawStatus === 'error' || rawStatus === 'cancelled') error = typeof display === 'string' && display !== '' ? display : typeof errorType === 'string' ? errorType : undefined;
  }
  return { callId, status: isToolStatus(rawStatus) ? rawStatus : undefined, text: texts.length > 0 ? texts.join('\n') : undefined, error, images };
}
