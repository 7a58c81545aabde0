// Agent Client Protocol (ACP) messages as captures record them, narrowed from `unknown`: the
// JSON-RPC message (bare, or inside a recorder's `{ts, dir, msg}` wrapper), `session/update`
// tool-call updates, and the `_meta` extensions that name the tool.
import { isToolNamespace, type ToolNamespace } from '../../canonical/meta.ts';

export type JsonObject = Readonly<Record<string, unknown>>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Keys recorders use for the time of a line, and for the wrapped message. */
const TIME_KEYS = ['ts', 'timestamp', 'time'] as const;
const MESSAGE_KEYS = ['msg', 'message', 'payload', 'data'] as const;

function isJsonRpc(o: JsonObject): boolean {
  return o['jsonrpc'] === '2.0' || typeof o['method'] === 'string' || ('id' in o && ('result' in o || 'error' in o));
}

/**
 * A time as epoch milliseconds: an RFC 3339 string, or a number (milliseconds; a value below
 * 1e11 is taken as seconds, as some recorders write `time.time()`).
 */
export function readTimeMs(value: unknown): number | undefined {
  let ms: number | undefined;
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}/.test(value)) ms = Date.parse(value);
  else if (typeof value === 'number' && Number.isFinite(value) && value > 0) ms = value < 1e11 ? value * 1000 : value;
  return ms !== undefined && Number.isFinite(ms) && ms > 0 && ms < 253_402_300_800_000 ? Math.round(ms) : undefined;
}

/** The JSON-RPC message of a line, the path to its `params` inside the line, and the line's time. */
export interface LocatedMessage {
  readonly message: JsonObject;
  readonly paramsPath: readonly string[];
  readonly timeMs?: number;
}

/**
 * Finds the JSON-RPC message of a captured line: the line itself (optionally with a top-level
 * `ts`), a recorder wrapper `{ts, dir, msg}`, or bare `session/update` params `{sessionId, update}`.
 */
export function locateMessage(line: JsonObject): LocatedMessage | undefined {
  const ownTime = TIME_KEYS.map((k) => readTimeMs(line[k])).find((t) => t !== undefined);
  const time = ownTime !== undefined ? { timeMs: ownTime } : {};
  if (isJsonRpc(line)) return { message: line, paramsPath: ['params'], ...time };
  for (const key of MESSAGE_KEYS) {
    const inner = line[key];
    if (isObject(inner) && isJsonRpc(inner)) return { message: inner, paramsPath: [key, 'params'], ...time };
  }
  if (typeof line['sessionId'] === 'string' && isObject(line['update'])) {
    return { message: { jsonrpc: '2.0', method: 'session/update', params: line }, paramsPath: [], ...time };
  }
  return undefined;
}

/** The tool identity a harness puts in `_meta`. */
export interface ToolMetaName {
  /** Grok Build: `_meta["x.ai/tool"]` is its CanonicalToolMeta (`name`, `namespace`, `kind`, …). */
  readonly xaiName?: string;
  readonly xaiNamespace?: ToolNamespace;
  /** Claude Code through claude-code-acp: `_meta.claudeCode.toolName`. */
  readonly claudeToolName?: string;
}

export function readToolMeta(meta: unknown): ToolMetaName {
  if (!isObject(meta)) return {};
  const xai = meta['x.ai/tool'];
  const claude = meta['claudeCode'];
  const xaiName = isObject(xai) ? nonEmpty(xai['name']) : undefined;
  const namespace = isObject(xai) ? nonEmpty(xai['namespace']) : undefined;
  const claudeToolName = isObject(claude) ? nonEmpty(claude['toolName']) : undefined;
  return {
    ...(xaiName ? { xaiName } : {}),
    ...(namespace && isToolNamespace(namespace) ? { xaiNamespace: namespace } : {}),
    ...(claudeToolName ? { claudeToolName } : {}),
  };
}

/** A `tool_call` or `tool_call_update` (also a permission request's `toolCall`): every field but the id optional. */
export interface ToolCallFields {
  readonly toolCallId: string;
  readonly title?: string;
  readonly kind?: string;
  readonly status?: string;
  readonly meta: ToolMetaName;
  /** Text of the `content` blocks of type text, when `content` is present (it replaces the collection). */
  readonly contentText?: string;
  readonly contentImages?: number;
  readonly hasRawInput: boolean;
  readonly hasRawOutput: boolean;
}

export function readToolCallFields(update: JsonObject): ToolCallFields | undefined {
  const toolCallId = nonEmpty(update['toolCallId']);
  if (!toolCallId) return undefined;
  const title = nonEmpty(update['title']);
  const kind = nonEmpty(update['kind']);
  const status = nonEmpty(update['status']);
  let content: { contentText?: string; contentImages?: number } = {};
  if (Array.isArray(update['content'])) {
    const texts: string[] = [];
    let images = 0;
    for (const item of update['content']) {
      // ToolCallContent: {type: "content", content: ContentBlock} | {type: "diff", …} | {type: "terminal", …}
      const block = isObject(item) && item['type'] === 'content' && isObject(item['content']) ? item['content'] : undefined;
      if (block?.['type'] === 'text' && typeof block['text'] === 'string') texts.push(block['text']);
      if (block?.['type'] === 'image') images++;
    }
    content = { contentText: texts.join('\n'), contentImages: images };
  }
  return {
    toolCallId,
    ...(title ? { title } : {}),
    ...(kind ? { kind } : {}),
    ...(status ? { status } : {}),
    meta: readToolMeta(update['_meta']),
    ...content,
    hasRawInput: 'rawInput' in update && update['rawInput'] !== null,
    hasRawOutput: 'rawOutput' in update && update['rawOutput'] !== null,
  };
}
