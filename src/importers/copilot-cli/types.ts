// The GitHub Copilot CLI session events the importer reads (`SessionEvent` in github/copilot-sdk
// nodejs/src/generated/session-events.ts, generated from session-events.schema.json), narrowed
// from `unknown`: each reader returns the record or a sentence naming the field that is wrong.
import { describeValue } from '../lines.ts';
import { idFault, idMember, isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';

/**
 * The envelope every event has: `{id, timestamp, type, data, parentId, agentId?, ephemeral?}`
 * (`agentId`: a sub-agent's events; absent for the main agent).
 */
export interface SessionEvent {
  readonly id: string;
  readonly type: string;
  /** As written; checked where a time is needed. */
  readonly timestamp: unknown;
  readonly data: JsonObject;
  readonly agentId: string | undefined;
}

export function readEvent(o: JsonObject): SessionEvent | { readonly fault: string; readonly problem: string } {
  const type = o['type'];
  if (typeof type !== 'string' || type === '') return { problem: 'malformed:event', fault: `\`type\` is ${describeValue(type)}, not an event type.` };
  const id = idMember(o, 'id');
  if (id === undefined) return { problem: 'malformed:event', fault: idFault(o, 'id') };
  const data = o['data'] ?? {};
  if (!isObject(data)) return { problem: 'malformed:event', fault: `\`data\` is ${describeValue(data)}, not an object.` };
  const agent = o['agentId'];
  if (agent !== undefined && agent !== null && idMember(o, 'agentId') === undefined) return { problem: 'malformed:event', fault: idFault(o, 'agentId') };
  return { id, type, timestamp: o['timestamp'], data, agentId: idMember(o, 'agentId') };
}

/** A non-negative safe integer member, `undefined` when absent, `'bad'` otherwise. */
export function countMember(o: JsonObject, key: string): number | undefined | 'bad' {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 'bad';
}

/**
 * Token figures as Copilot CLI logs them, per request (`assistant.usage`) or per model for a
 * session segment (`session.shutdown` modelMetrics[model].usage): inputTokens includes
 * cacheReadTokens and cacheWriteTokens, outputTokens includes reasoningTokens.
 */
export interface TokenFigures {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly reasoning: number;
}

const TOKEN_KEYS = [
  ['inputTokens', 'input'],
  ['outputTokens', 'output'],
  ['cacheReadTokens', 'cacheRead'],
  ['cacheWriteTokens', 'cacheWrite'],
  ['reasoningTokens', 'reasoning'],
] as const;

/** The figures of an object holding `inputTokens`, `outputTokens`, … (absent counts are 0), or a fault. */
export function readTokenFigures(o: JsonObject, where: string): TokenFigures | { readonly fault: string } {
  const got: Record<string, number> = {};
  for (const [key, name] of TOKEN_KEYS) {
    const n = countMember(o, key);
    if (n === 'bad') return { fault: `\`${where}${key}\` is ${describeValue(o[key])}, not a non-negative integer.` };
    got[name] = n ?? 0;
  }
  const f: TokenFigures = { input: got['input'] ?? 0, output: got['output'] ?? 0, cacheRead: got['cacheRead'] ?? 0, cacheWrite: got['cacheWrite'] ?? 0, reasoning: got['reasoning'] ?? 0 };
  if (f.cacheRead + f.cacheWrite > f.input) return { fault: `\`${where}cacheReadTokens\` + \`cacheWriteTokens\` (${f.cacheRead + f.cacheWrite}) exceed \`${where}inputTokens\` (${f.input}), which includes them.` };
  if (f.reasoning > f.output) return { fault: `\`${where}reasoningTokens\` (${f.reasoning}) exceeds \`${where}outputTokens\` (${f.output}), which includes it.` };
  return f;
}

/** `tool.execution_start` data. */
export interface ToolStart {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly mcpServerName: string | undefined;
  readonly mcpToolName: string | undefined;
  readonly model: string | undefined;
  /** `arguments`: an object (verbatim from the line), a string (freeform tools), or absent. */
  readonly argumentsKind: 'object' | 'string' | 'absent';
}

export function readToolStart(data: JsonObject): ToolStart | { readonly fault: string } {
  const toolCallId = idMember(data, 'toolCallId');
  if (toolCallId === undefined) return { fault: idFault(data, 'toolCallId', 'data.') };
  const toolName = idMember(data, 'toolName');
  if (toolName === undefined) return { fault: idFault(data, 'toolName', 'data.') };
  const args = data['arguments'];
  if (args !== undefined && args !== null && typeof args !== 'string' && !isObject(args)) return { fault: `\`data.arguments\` is ${describeValue(args)}, not an object or a string.` };
  for (const key of ['mcpServerName', 'mcpToolName', 'model']) {
    const v = data[key];
    if (v !== undefined && v !== null && idMember(data, key) === undefined) return { fault: idFault(data, key, 'data.') };
  }
  return {
    toolCallId,
    toolName,
    mcpServerName: idMember(data, 'mcpServerName'),
    mcpToolName: idMember(data, 'mcpToolName'),
    model: idMember(data, 'model'),
    argumentsKind: typeof args === 'string' ? 'string' : isObject(args) ? 'object' : 'absent',
  };
}

/** `tool.execution_complete` data. */
export interface ToolComplete {
  readonly toolCallId: string;
  readonly success: boolean;
  readonly model: string | undefined;
  /** `result.content`: the text the model was given (`detailedContent` is the UI's fuller copy). */
  readonly content: string | undefined;
  /** `error.message`. */
  readonly errorMessage: string | undefined;
  readonly errorCode: string | undefined;
  /** Image blocks among `result.contents`. */
  readonly images: number;
}

export function readToolComplete(data: JsonObject): ToolComplete | { readonly fault: string } {
  const toolCallId = idMember(data, 'toolCallId');
  if (toolCallId === undefined) return { fault: idFault(data, 'toolCallId', 'data.') };
  const success = data['success'];
  if (typeof success !== 'boolean') return { fault: `\`data.success\` is ${describeValue(success)}, not a boolean.` };
  const result = data['result'];
  if (result !== undefined && result !== null && !isObject(result)) return { fault: `\`data.result\` is ${describeValue(result)}, not an object.` };
  const error = data['error'];
  if (error !== undefined && error !== null && !isObject(error)) return { fault: `\`data.error\` is ${describeValue(error)}, not an object.` };
  const model = data['model'];
  if (model !== undefined && model !== null && idMember(data, 'model') === undefined) return { fault: idFault(data, 'model', 'data.') };
  const contents = isObject(result) && Array.isArray(result['contents']) ? (result['contents'] as readonly unknown[]) : [];
  return {
    toolCallId,
    success,
    model: idMember(data, 'model'),
    content: isObject(result) && typeof result['content'] === 'string' ? result['content'] : undefined,
    errorMessage: isObject(error) && typeof error['message'] === 'string' ? error['message'] : undefined,
    errorCode: isObject(error) && typeof error['code'] === 'string' ? error['code'] : undefined,
    images: contents.filter((c) => isObject(c) && c['type'] === 'image').length,
  };
}
