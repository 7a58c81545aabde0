// The pi session entries the importer reads (badlogic/pi-mono
// packages/coding-agent/src/core/session-manager.ts `FileEntry`, and the messages of
// packages/ai/src/types.ts), narrowed from `unknown`: each reader returns the value or a
// sentence naming the field that kept it from being one.
import { describeValue } from '../lines.ts';
import { idFault, idMember, isObject, type JsonObject } from '../json.ts';

/** Entry types the importer counts without reading (session-manager.ts `SessionEntry`). */
export const COUNTED_TYPES = ['model_change', 'thinking_level_change', 'compaction', 'branch_summary', 'custom', 'custom_message', 'label', 'session_info'] as const;

export function isCountedType(v: string): boolean {
  return (COUNTED_TYPES as readonly string[]).includes(v);
}

// ------------------------------------------------------------------------- usage

/** pi-ai's `Usage`: four buckets (cache apart from input) and their total. */
export interface UsageFigures {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** totalTokens, or undefined when absent. */
  readonly total: number | undefined;
}

const USAGE_KEYS = ['input', 'output', 'cacheRead', 'cacheWrite', 'totalTokens'] as const;

/** The figures of `message.usage` (absent figures are 0), or a fault sentence. */
export function readUsage(v: unknown): UsageFigures | { readonly fault: string } {
  if (!isObject(v)) return { fault: `\`message.usage\` is ${describeValue(v)}, not an object.` };
  const got: Partial<Record<(typeof USAGE_KEYS)[number], number>> = {};
  for (const key of USAGE_KEYS) {
    const n = v[key];
    if (n === undefined || n === null) continue;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return { fault: `\`message.usage.${key}\` is ${describeValue(n)}, not a non-negative integer.` };
    got[key] = n;
  }
  const figures = { input: got.input ?? 0, output: got.output ?? 0, cacheRead: got.cacheRead ?? 0, cacheWrite: got.cacheWrite ?? 0, total: got.totalTokens };
  if (!Number.isSafeInteger(figures.input + figures.output + figures.cacheRead + figures.cacheWrite)) return { fault: '`message.usage` figures add up beyond 2^53 - 1.' };
  return figures;
}

/**
 * Whether `input` holds the cached tokens too: google.ts and google-vertex.ts set input =
 * promptTokenCount (cached inside) and totalTokens = totalTokenCount = input + output, where
 * the other providers' totals add the cache buckets to an input without them.
 */
export function cacheInsideInput(u: UsageFigures): boolean {
  return u.cacheRead > 0 && u.input >= u.cacheRead && u.total !== undefined && u.total === u.input + u.output;
}

export function isZero(u: UsageFigures): boolean {
  return u.input === 0 && u.output === 0 && u.cacheRead === 0 && u.cacheWrite === 0;
}

// ------------------------------------------------------------------------- calls and results

/** A `toolCall` block of an assistant message's `content`. */
export interface ToolCallBlock {
  readonly id: string;
  readonly name: string;
  /** The block's index in `message.content` (where its `arguments` text is). */
  readonly index: number;
  /** Whether `arguments` is an object (absent: the call took no arguments). */
  readonly hasArgs: boolean;
}

/** The `toolCall` blocks of `message.content`, each one or the fault that keeps it from being one. */
export function toolCallsOf(message: JsonObject): (ToolCallBlock | { readonly fault: string })[] {
  const content = message['content'];
  if (!Array.isArray(content)) return [];
  const out: (ToolCallBlock | { readonly fault: string })[] = [];
  (content as readonly unknown[]).forEach((block, index) => {
    if (!isObject(block) || block['type'] !== 'toolCall') return;
    const where = `message.content[${index}].`;
    const id = idMember(block, 'id');
    if (id === undefined) return out.push({ fault: idFault(block, 'id', where) });
    const name = idMember(block, 'name');
    if (name === undefined) return out.push({ fault: idFault(block, 'name', where) });
    const args = block['arguments'];
    if (args !== undefined && args !== null && !isObject(args)) return out.push({ fault: `\`${where}arguments\` is ${describeValue(args)}, not an object.` });
    out.push({ id, name, index, hasArgs: isObject(args) });
  });
  return out;
}

/** What a `toolResult` message says about its call. */
export interface ToolResult {
  readonly callId: string;
  readonly isError: boolean;
  /** The `text` blocks joined by newlines (a string `content` as it is). */
  readonly text: string | undefined;
  /** `details.error` of a result that failed in its details (the text is then often JSON). */
  readonly error?: string;
  readonly images: number;
}

/**
 * Reads a `toolResult` message: `{toolCallId, toolName, content, details?, isError}`. A result
 * whose `details.status` is `error` failed whatever `isError` says (OpenClaw's tools).
 */
export function readToolResult(message: JsonObject): ToolResult | { readonly fault: string } {
  const callId = idMember(message, 'toolCallId');
  if (callId === undefined) return { fault: idFault(message, 'toolCallId', 'message.') };
  const content = message['content'];
  const texts: string[] = [];
  let images = 0;
  if (typeof content === 'string') texts.push(content);
  else if (Array.isArray(content)) {
    for (const block of content as readonly unknown[]) {
      if (!isObject(block)) continue;
      if (block['type'] === 'text' && typeof block['text'] === 'string') texts.push(block['text']);
      else if (block['type'] === 'image') images++;
    }
  }
  // OpenClaw's tools report some failures as a result with `details: {status: "error", error}`
  // and `isError: false` (a missing file for `read`): the details say it failed.
  const details = message['details'];
  const failedInDetails = isObject(details) && details['status'] === 'error';
  const text = texts.length > 0 ? texts.join('\n') : failedInDetails && typeof details['error'] === 'string' ? details['error'] : undefined;
  const error = failedInDetails && typeof details['error'] === 'string' && details['error'] !== '' ? details['error'] : undefined;
  return { callId, isError: message['isError'] === true || failedInDetails, text, ...(error === undefined ? {} : { error }), images };
}
