// The raw shapes opencode writes (storage JSON files, `opencode run --format json` lines, server
// bus events), narrowed from `unknown` by guards: only the fields the importer reads are typed.
// A guard that can refuse a record has a `…Fault` beside it: the sentence a malformed record's
// detail carries.
import { describeValue } from '../lines.ts';

export type JsonObject = Readonly<Record<string, unknown>>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/** A count of tokens: a non-negative safe integer. */
export function isTokenCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Epoch milliseconds, as opencode writes every time. */
export function isEpochMs(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 && value < 253_402_300_800_000;
}

/** `tokens` of an assistant message or a step-finish part. */
export interface OpencodeTokens {
  readonly input: number;
  readonly output: number;
  readonly reasoning?: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}

/** Reads `tokens{input, output, reasoning?, cache?{read, write}}`; undefined unless input and output are counts. */
export function readTokens(value: unknown): OpencodeTokens | undefined {
  if (!isObject(value) || !isTokenCount(value['input']) || !isTokenCount(value['output'])) return undefined;
  const cache = isObject(value['cache']) ? value['cache'] : undefined;
  const reasoning = value['reasoning'];
  const read = cache?.['read'];
  const write = cache?.['write'];
  return {
    input: value['input'],
    output: value['output'],
    ...(isTokenCount(reasoning) ? { reasoning } : {}),
    ...(isTokenCount(read) ? { cacheRead: read } : {}),
    ...(isTokenCount(write) ? { cacheWrite: write } : {}),
  };
}

/** Why a `tokens` member is unreadable; undefined when it is absent (null) or readable. */
export function tokensFault(value: unknown): string | undefined {
  if (value === undefined || value === null || readTokens(value) !== undefined) return undefined;
  if (!isObject(value)) return `\`tokens\` is ${describeValue(value)}, not an object.`;
  const key = isTokenCount(value['input']) ? 'output' : 'input';
  return `\`tokens.${key}\` is ${describeValue(value[key])}, not a non-negative integer.`;
}

/** Message "info" (`message/<sessionID>/<messageID>.json`, or `info` of a bus event). */
export interface OpencodeMessage {
  readonly id: string;
  readonly sessionID: string;
  readonly role: string;
  readonly parentID?: string;
  readonly modelID?: string;
  readonly providerID?: string;
  readonly createdMs?: number;
  readonly completedMs?: number;
  readonly tokens?: OpencodeTokens;
  /** Set when `tokens` is there but unreadable: the message's usage is malformed, not absent. */
  readonly tokensFault?: string;
}

/** Why a value is no message (readMessage said no), naming the field. */
export function messageFault(value: unknown): string {
  if (!isObject(value)) return `The message is ${describeValue(value)}, not an object.`;
  for (const key of ['id', 'sessionID'] as const) {
    if (!isNonEmptyString(value[key])) return `The message's \`${key}\` is ${describeValue(value[key])}, not a non-empty string.`;
  }
  return `The message's \`role\` is ${describeValue(value['role'])}, not a string.`;
}

/**
 * A storage object without a `type` that still looks like a message (it has a `role`, or both
 * an `id` and a `sessionID`): when readMessage refuses it, it is a malformed message rather than
 * an object of some other kind (a session's info has an `id` but no `sessionID`).
 */
export function looksLikeMessage(value: JsonObject): boolean {
  return !('type' in value) && ('role' in value || ('id' in value && 'sessionID' in value));
}

/** A message has string `id`, `sessionID` and `role`. */
export function readMessage(value: unknown): OpencodeMessage | undefined {
  if (!isObject(value) || !isNonEmptyString(value['id']) || !isNonEmptyString(value['sessionID']) || typeof value['role'] !== 'string') return undefined;
  const time = isObject(value['time']) ? value['time'] : undefined;
  const created = time?.['created'];
  const completed = time?.['completed'];
  const tokens = readTokens(value['tokens']);
  const badTokens = tokensFault(value['tokens']);
  const parentID = value['parentID'];
  const modelID = value['modelID'];
  const providerID = value['providerID'];
  return {
    id: value['id'],
    sessionID: value['sessionID'],
    role: value['role'],
    ...(isNonEmptyString(parentID) ? { parentID } : {}),
    ...(isNonEmptyString(modelID) ? { modelID } : {}),
    ...(isNonEmptyString(providerID) ? { providerID } : {}),
    ...(isEpochMs(created) ? { createdMs: created } : {}),
    ...(isEpochMs(completed) ? { completedMs: completed } : {}),
    ...(tokens ? { tokens } : {}),
    ...(badTokens !== undefined ? { tokensFault: badTokens } : {}),
  };
}

/** The model as opencode users name it: `providerID/modelID` (the model table matches provider prefixes). */
export function modelName(message: OpencodeMessage | undefined): string {
  if (!message?.modelID) return '';
  return message.providerID ? `${message.providerID}/${message.modelID}` : message.modelID;
}

/** A part: `part/<messageID>/<partID>.json`, `part` of a run event, or `properties.part` of a bus event. */
export interface OpencodePartHead {
  readonly type: string;
  readonly id?: string;
  readonly sessionID?: string;
  readonly messageID?: string;
}

export function readPartHead(value: unknown): OpencodePartHead | undefined {
  if (!isObject(value) || !isNonEmptyString(value['type'])) return undefined;
  const { id, sessionID, messageID } = value;
  return {
    type: value['type'],
    ...(isNonEmptyString(id) ? { id } : {}),
    ...(isNonEmptyString(sessionID) ? { sessionID } : {}),
    ...(isNonEmptyString(messageID) ? { messageID } : {}),
  };
}

/** A ToolPart (`type: "tool"`): `state` is discriminated by `status` (pending, running, completed, error). */
export interface OpencodeToolPart extends OpencodePartHead {
  readonly callID?: string;
  readonly tool: string;
  readonly status: string;
  readonly output?: string;
  readonly error?: string;
  readonly startMs?: number;
  readonly endMs?: number;
}

/** Why a part of type `tool` is unreadable (readToolPart said no), naming the field. */
export function toolPartFault(value: JsonObject): string {
  if (!isNonEmptyString(value['tool'])) return `The tool part's \`tool\` is ${describeValue(value['tool'])}, not a non-empty string.`;
  const state = value['state'];
  if (!isObject(state)) return `The tool part's \`state\` is ${describeValue(state)}, not an object.`;
  return `The tool part's \`state.status\` is ${describeValue(state['status'])}, not a string.`;
}

export function readToolPart(value: unknown): OpencodeToolPart | undefined {
  const head = readPartHead(value);
  if (!head || head.type !== 'tool' || !isObject(value) || !isNonEmptyString(value['tool']) || !isObject(value['state'])) return undefined;
  const state = value['state'];
  if (typeof state['status'] !== 'string') return undefined;
  const time = isObject(state['time']) ? state['time'] : undefined;
  const start = time?.['start'];
  const end = time?.['end'];
  const { output, error } = state;
  const callID = value['callID'];
  return {
    ...head,
    tool: value['tool'],
    status: state['status'],
    ...(isNonEmptyString(callID) ? { callID } : {}),
    ...(typeof output === 'string' ? { output } : {}),
    ...(typeof error === 'string' ? { error } : {}),
    ...(isEpochMs(start) ? { startMs: start } : {}),
    ...(isEpochMs(end) ? { endMs: end } : {}),
  };
}

/** A StepFinishPart (`type: "step-finish"`): the tokens of one model request. */
export interface OpencodeStepFinishPart extends OpencodePartHead {
  readonly tokens?: OpencodeTokens;
  /** Set when `tokens` is there but unreadable. */
  readonly tokensFault?: string;
}

export function readStepFinishPart(value: unknown): OpencodeStepFinishPart | undefined {
  const head = readPartHead(value);
  if (!head || head.type !== 'step-finish' || !isObject(value)) return undefined;
  const tokens = readTokens(value['tokens']);
  const badTokens = tokensFault(value['tokens']);
  return { ...head, ...(tokens ? { tokens } : {}), ...(badTokens !== undefined ? { tokensFault: badTokens } : {}) };
}

/** One line of `opencode run --format json`: `{type, timestamp, sessionID, part}`. */
export interface OpencodeRunEvent {
  readonly type: string;
  readonly timestampMs?: number;
  readonly sessionID?: string;
  readonly part: JsonObject;
}

export function readRunEvent(value: JsonObject): OpencodeRunEvent | undefined {
  const { type, timestamp, sessionID, part } = value;
  if (!isNonEmptyString(type) || type.includes('.') || !isObject(part)) return undefined;
  return {
    type,
    part,
    ...(isEpochMs(timestamp) ? { timestampMs: timestamp } : {}),
    ...(isNonEmptyString(sessionID) ? { sessionID } : {}),
  };
}

/** A server bus event (`/event` SSE): `{type: "message.part.updated" | "message.updated" | …, properties}`. */
export interface OpencodeBusEvent {
  readonly type: string;
  readonly properties: JsonObject;
}

export function readBusEvent(value: JsonObject): OpencodeBusEvent | undefined {
  const { type, properties } = value;
  if (!isNonEmptyString(type) || !type.includes('.') || !isObject(properties)) return undefined;
  return { type, properties };
}
