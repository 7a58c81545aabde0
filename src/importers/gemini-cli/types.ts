// The Gemini CLI session records the importer reads (chatRecordingTypes.ts in
// google-gemini/gemini-cli), narrowed from `unknown`: each reader returns the record or
// undefined, and a `…Fault` function beside it names the field that kept it from being one.
import { describeValue } from '../lines.ts';
import { idFault, idMember, isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';

/** A member that is a non-negative safe integer (a token count), or undefined. */
function countMember(o: JsonObject, key: string): number | undefined {
  const v = o[key];
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

// ------------------------------------------------------------------------- record kinds

/**
 * What a JSONL line is, tested in the order Gemini CLI's own loader (`loadConversationRecord`)
 * tests it: a rewind (`$rewindTo` string), a message (`id` string), a metadata update (`$set`
 * object), the session metadata (`sessionId` and `projectHash` strings), or nothing it knows.
 */
export type RecordKind = 'rewind' | 'message' | 'metadata_update' | 'metadata' | 'unknown';

export function recordKind(o: JsonObject): RecordKind {
  if (typeof o['$rewindTo'] === 'string') return 'rewind';
  if (typeof o['id'] === 'string') return 'message';
  if (isObject(o['$set'])) return 'metadata_update';
  if (typeof o['sessionId'] === 'string' && typeof o['projectHash'] === 'string') return 'metadata';
  return 'unknown';
}

/** Why a line is none of the record kinds, for its dead letter. */
export function unknownRecordFault(o: JsonObject): string {
  return `\`id\` is ${describeValue(o['id'])} and \`sessionId\` is ${describeValue(o['sessionId'])}: the record is no message, session metadata, \`$set\` or \`$rewindTo\`.`;
}

/** The session metadata: line 1 of a JSONL file, the top of a legacy `.json` document. */
export interface SessionMetadata {
  readonly sessionId: string;
  readonly kind: string | undefined;
}

export function readMetadata(o: JsonObject): SessionMetadata | undefined {
  const sessionId = idMember(o, 'sessionId');
  if (sessionId === undefined) return undefined;
  return { sessionId, kind: typeof o['kind'] === 'string' ? o['kind'] : undefined };
}

export function metadataFault(o: JsonObject): string {
  return idFault(o, 'sessionId', '');
}

// ------------------------------------------------------------------------- messages

/** `MessageRecord.type`. Only `gemini` messages carry tool calls and tokens; `info`, `error`
 * and `warning` are the CLI's own notices. Another string is a type of a newer build. */
export const MESSAGE_TYPES = ['user', 'gemini', 'info', 'error', 'warning'] as const;

/** The members of a `MessageRecord` the parser reads (content, thoughts and display fields aside). */
export interface MessageRecord {
  readonly id: string;
  /** One of MESSAGE_TYPES, or the type of a newer build. */
  readonly type: string;
  /** As written; checked only where a time is needed (a gemini message with tokens or calls). */
  readonly timestamp: unknown;
  readonly model: string | undefined;
  /** `toolCalls`, still unread (each element is checked on its own). */
  readonly toolCalls: readonly unknown[];
  /** `tokens`: undefined or null when the message has none. */
  readonly tokens: unknown;
  /** True for a `user` message that is a prompt (starts a turn). */
  readonly isPrompt: boolean;
}

/**
 * A user message is a prompt unless every part of its content is a `functionResponse` (a
 * history sync can write tool responses as user turns; they continue a turn, not start one).
 */
function isPromptContent(content: unknown): boolean {
  if (!Array.isArray(content) || content.length === 0) return true;
  return !content.every((part: unknown) => isObject(part) && isObject(part['functionResponse']));
}

export function readMessage(o: JsonObject): MessageRecord | undefined {
  const id = idMember(o, 'id');
  const type = o['type'];
  if (id === undefined || typeof type !== 'string' || type === '') return undefined;
  const model = o['model'];
  if (model !== undefined && model !== null && (typeof model !== 'string' || model.length > MAX_ID_CHARS)) return undefined;
  const toolCalls = o['toolCalls'];
  if (toolCalls !== undefined && toolCalls !== null && !Array.isArray(toolCalls)) return undefined;
  return {
    id,
    type,
    timestamp: o['timestamp'],
    model: typeof model === 'string' && model !== '' ? model : undefined,
    toolCalls: Array.isArray(toolCalls) ? (toolCalls as readonly unknown[]) : [],
    tokens: o['tokens'],
    isPrompt: type === 'user' && isPromptContent(o['content']),
  };
}

/** Why a record with a string `id` is no readable message, naming the field. */
export function messageFault(o: JsonObject): string {
  if (idMember(o, 'id') === undefined) return idFault(o, 'id', '');
  if (typeof o['type'] !== 'string' || o['type'] === '') return `\`type\` is ${describeValue(o['type'])}, not a message type (${MESSAGE_TYPES.join(', ')}, …).`;
  const model = o['model'];
  if (model !== undefined && model !== null && (typeof model !== 'string' || model.length > MAX_ID_CHARS)) return idFault(o, 'model', '');
  return `\`toolCalls\` is ${describeValue(o['toolCalls'])}, not an array.`;
}

// ------------------------------------------------------------------------- tokens

/**
 * `TokensSummary`, Gemini's `usageMetadata` renamed: `input` (promptTokenCount, which includes
 * the cached tokens), `output` (candidatesTokenCount, thoughts excluded), `cached`
 * (cachedContentTokenCount), `thoughts` (thoughtsTokenCount), `tool` (toolUsePromptTokenCount,
 * not in promptTokenCount) and `total` (the sum of input, output, thoughts and tool).
 */
export interface TokensSummary {
  readonly input: number;
  readonly output: number;
  readonly cached: number;
  readonly thoughts: number;
  readonly tool: number;
}

const OPTIONAL_COUNTS = ['cached', 'thoughts', 'tool'] as const;

/** The tokens, or undefined when a figure is missing, negative, not an integer or inconsistent. */
export function readTokens(v: unknown): TokensSummary | undefined {
  if (!isObject(v)) return undefined;
  const input = countMember(v, 'input');
  const output = countMember(v, 'output');
  if (input === undefined || output === undefined) return undefined;
  const optional: Partial<Record<(typeof OPTIONAL_COUNTS)[number], number>> = {};
  for (const key of OPTIONAL_COUNTS) {
    // Absent (older builds write no thoughts or tool) is zero; present but no count is bad.
    if (v[key] === undefined || v[key] === null) continue;
    const n = countMember(v, key);
    if (n === undefined) return undefined;
    optional[key] = n;
  }
  const tokens = { input, output, cached: optional.cached ?? 0, thoughts: optional.thoughts ?? 0, tool: optional.tool ?? 0 };
  // Cached tokens are part of the prompt: more cached than prompt tokens contradicts the format.
  if (tokens.cached > tokens.input || !Number.isSafeInteger(tokens.input + tokens.tool)) return undefined;
  return tokens;
}

/** Why `tokens` is no TokensSummary, naming the first figure that is wrong. */
export function tokensFault(v: unknown): string {
  if (!isObject(v)) return `\`tokens\` is ${describeValue(v)}, not an object or null.`;
  for (const key of ['input', 'output']) {
    if (countMember(v, key) === undefined) return `\`tokens.${key}\` is ${describeValue(v[key])}, not a non-negative integer.`;
  }
  for (const key of OPTIONAL_COUNTS) {
    if (v[key] !== undefined && v[key] !== null && countMember(v, key) === undefined) return `\`tokens.${key}\` is ${describeValue(v[key])}, not a non-negative integer.`;
  }
  if ((countMember(v, 'cached') ?? 0) > (countMember(v, 'input') ?? 0)) return `\`tokens.cached\` (${String(v['cached'])}) exceeds \`tokens.input\` (${String(v['input'])}), which includes it.`;
  return '`tokens.input` plus `tokens.tool` is beyond 2^53 - 1.';
}

// ------------------------------------------------------------------------- tool calls

/** `ToolCallRecord.status` (the scheduler's `Status`): three final states, four in flight. */
export const FINAL_STATUSES = ['success', 'error', 'cancelled'] as const;
export const RUNNING_STATUSES = ['validating', 'scheduled', 'executing', 'awaiting_approval'] as const;
export type ToolCallStatus = (typeof FINAL_STATUSES)[number] | (typeof RUNNING_STATUSES)[number];

function isToolCallStatus(v: unknown): v is ToolCallStatus {
  return typeof v === 'string' && ([...FINAL_STATUSES, ...RUNNING_STATUSES] as readonly string[]).includes(v);
}

/** The members of a `ToolCallRecord` the parser reads. */
export interface ToolCallRecord {
  readonly id: string;
  readonly name: string;
  readonly status: ToolCallStatus;
  /** As written: the time the call was recorded (on completion), checked by the parser. */
  readonly timestamp: unknown;
  /** The subagent that ran the call, when the main session recorded it. */
  readonly agentId: string | undefined;
  /** `displayName`: an MCP tool's is `<tool> (<server> MCP Server)`. */
  readonly displayName: string | undefined;
  /** `result`, a PartListUnion (usually `[{functionResponse:{id,name,response}}]`), or null. */
  readonly result: unknown;
  /** `resultDisplay`: the UI's rendering, a string or an object (file diffs). */
  readonly resultDisplay: unknown;
}

export function readToolCall(v: unknown): ToolCallRecord | undefined {
  if (!isObject(v)) return undefined;
  const id = idMember(v, 'id');
  const name = idMember(v, 'name');
  if (id === undefined || name === undefined || !isObject(v['args']) || !isToolCallStatus(v['status'])) return undefined;
  const agentId = idMember(v, 'agentId');
  const displayName = v['displayName'];
  return {
    id,
    name,
    status: v['status'],
    timestamp: v['timestamp'],
    agentId,
    displayName: typeof displayName === 'string' ? displayName : undefined,
    result: v['result'],
    resultDisplay: v['resultDisplay'],
  };
}

/** Why a `toolCalls` element is no ToolCallRecord, naming the field. */
export function toolCallFault(v: unknown, index: number): string {
  const where = `toolCalls[${index}].`;
  if (!isObject(v)) return `\`toolCalls[${index}]\` is ${describeValue(v)}, not an object.`;
  if (idMember(v, 'id') === undefined) return idFault(v, 'id', where);
  if (idMember(v, 'name') === undefined) return idFault(v, 'name', where);
  if (!isObject(v['args'])) return `\`${where}args\` is ${describeValue(v['args'])}, not an object.`;
  return `\`${where}status\` is ${describeValue(v['status'])}, not one of ${[...FINAL_STATUSES, ...RUNNING_STATUSES].join(', ')}.`;
}

/** What a call's `result` says: the text the model was given, images, and an error message. */
export interface ToolResult {
  readonly text: string | undefined;
  readonly images: number;
  readonly error: string | undefined;
}

function isImagePart(part: JsonObject): boolean {
  for (const key of ['inlineData', 'fileData']) {
    const data = part[key];
    if (isObject(data)) return typeof data['mimeType'] !== 'string' || data['mimeType'].startsWith('image/');
  }
  return false;
}

/**
 * Reads a PartListUnion: a string, one Part or an array of them. A `functionResponse` part
 * gives `response.output` (or `response.error`, or the response as JSON when it has neither),
 * `text` parts give their text, `inlineData` / `fileData` image parts count as images (also
 * inside `functionResponse.parts`, where newer builds put them).
 */
export function readToolResult(result: unknown): ToolResult {
  if (result === undefined || result === null) return { text: undefined, images: 0, error: undefined };
  if (typeof result === 'string') return { text: result, images: 0, error: undefined };
  const parts: readonly unknown[] = Array.isArray(result) ? (result as readonly unknown[]) : [result];
  const texts: string[] = [];
  let images = 0;
  let error: string | undefined;
  for (const part of parts) {
    if (typeof part === 'string') {
      texts.push(part);
      continue;
    }
    if (!isObject(part)) continue;
    const fr = part['functionResponse'];
    if (isObject(fr)) {
      const response = fr['response'];
      if (isObject(response)) {
        const output = response['output'];
        const err = response['error'];
        if (typeof output === 'string') texts.push(output);
        if (typeof err === 'string') {
          error ??= err;
          if (typeof output !== 'string') texts.push(err);
        } else if (isObject(err) && typeof err['message'] === 'string') {
          error ??= err['message'];
        }
        if (typeof output !== 'string' && typeof err !== 'string') texts.push(JSON.stringify(response));
      }
      const nested = fr['parts'];
      if (Array.isArray(nested)) images += (nested as readonly unknown[]).filter((p) => isObject(p) && isImagePart(p)).length;
      continue;
    }
    if (typeof part['text'] === 'string') texts.push(part['text']);
    else if (isImagePart(part)) images++;
  }
  return { text: texts.join('\n'), images, error };
}

/** `<tool> (<server> MCP Server)`: the display name Gemini CLI gives a tool of an MCP server. */
const MCP_DISPLAY_NAME = /^(.+) \((.+) MCP Server\)$/;

/** The MCP server named by a call's display name, if it names one. */
export function mcpServerOf(displayName: string | undefined): string | undefined {
  if (displayName === undefined) return undefined;
  return MCP_DISPLAY_NAME.exec(displayName)?.[2];
}
