// The raw shapes opencode writes (storage JSON files, `opencode run --format json` lines, server
// bus events), narrowed from `unknown` by guards: only the fields the importer reads are typed.

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
}

/** A message has string `id`, `sessionID` and `role`. */
export function readMessage(value: unknown): OpencodeMessage | undefined {
  if (!isObject(value) || !isNonEmptyString(value['id']) || !isNonEmptyString(value['sessionID']) || typeof value['role'] !== 'string') return undefined;
  const time = isObject(value['time']) ? value['time'] : undefined;
  const created = time?.['created'];
  const completed = time?.['completed'];
  const tokens = readTokens(value['tokens']);
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
}

export function readStepFinishPart(value: unknown): OpencodeStepFinishPart | undefined {
  const head = readPartHead(value);
  if (!head || head.type !== 'step-finish' || !isObject(value)) return undefined;
  const tokens = readTokens(value['tokens']);
  return { ...head, ...(tokens ? { tokens } : {}) };
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
