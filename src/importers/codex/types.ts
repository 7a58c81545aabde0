// The raw shapes of a Codex rollout that the parser reads, each with a guard that narrows an
// unknown JSON value to it (or says no). Only the fields the importer uses are typed: Codex adds
// fields often, and an unknown field must never make a record unreadable. Each guard that can
// refuse a record has a `…Fault` beside it: the sentence a malformed record's detail carries.
import { describeValue } from '../lines.ts';
import { isObject, type JsonObject } from '../json.ts';


function stringField(o: JsonObject, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'string' ? v : undefined;
}

function nonEmptyString(o: JsonObject, key: string): string | undefined {
  const v = stringField(o, key);
  return v === undefined || v === '' ? undefined : v;
}

/** A token count as Codex writes it: a non-negative integer that JavaScript holds exactly. */
function countField(o: JsonObject, key: string): number | undefined {
  const v = o[key];
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

// ------------------------------------------------------------------------- line envelopes

/** The envelope types Codex writes (`RolloutItem`, serde tag `type`, content `payload`). */
export const ENVELOPE_TYPES = [
  'session_meta',
  'turn_context',
  'response_item',
  'event_msg',
  'compacted',
  'world_state',
  'inter_agent_communication_metadata',
] as const;
export type EnvelopeType = (typeof ENVELOPE_TYPES)[number];

/** `{"timestamp","type","payload"}`: every line since the September 2025 builds (0.3x). */
export interface RolloutLine {
  readonly timestamp: string | undefined;
  readonly type: string;
  readonly payload: JsonObject;
}

export function readRolloutLine(o: JsonObject): RolloutLine | undefined {
  const type = stringField(o, 'type');
  const payload = o['payload'];
  if (type === undefined || !isObject(payload)) return undefined;
  return { timestamp: stringField(o, 'timestamp'), type, payload };
}

export function isEnvelopeType(type: string): type is EnvelopeType {
  return (ENVELOPE_TYPES as readonly string[]).includes(type);
}

/**
 * The first line of a legacy rollout (Codex ≤ 0.2x, until mid-September 2025): the session
 * meta without an envelope, `{"id","timestamp","instructions","git"}`.
 */
export interface LegacyMeta {
  readonly id: string;
  readonly timestamp: string | undefined;
}

export function readLegacyMeta(o: JsonObject): LegacyMeta | undefined {
  if ('type' in o || 'record_type' in o) return undefined;
  const id = nonEmptyString(o, 'id');
  return id === undefined ? undefined : { id, timestamp: stringField(o, 'timestamp') };
}

/** `{"record_type":"state"}`: a legacy session-state snapshot, no data for us. */
export function isLegacyState(o: JsonObject): boolean {
  return typeof o['record_type'] === 'string';
}

// ------------------------------------------------------------------------- context records

export interface SessionMeta {
  readonly id: string;
  readonly timestamp: string | undefined;
  readonly model: string | undefined;
}

export function readSessionMeta(p: JsonObject): SessionMeta | undefined {
  const id = nonEmptyString(p, 'id');
  return id === undefined ? undefined : { id, timestamp: stringField(p, 'timestamp'), model: nonEmptyString(p, 'model') };
}

/** Why a `session_meta` payload is unreadable: its `id` is what the importer needs. */
export function sessionMetaFault(p: JsonObject): string {
  return `\`payload.id\` is ${describeValue(p['id'])}, not a non-empty string.`;
}

export interface TurnContext {
  readonly model: string | undefined;
  readonly turnId: string | undefined;
}

export function readTurnContext(p: JsonObject): TurnContext {
  return { model: nonEmptyString(p, 'model'), turnId: nonEmptyString(p, 'turn_id') };
}

/** `event_msg` `task_started` (alias `turn_started`): a turn id and the model's window. */
export interface TaskStarted {
  readonly turnId: string | undefined;
  readonly contextWindowTokens: number | undefined;
}

export function readTaskStarted(p: JsonObject): TaskStarted {
  return { turnId: nonEmptyString(p, 'turn_id'), contextWindowTokens: countField(p, 'model_context_window') };
}

// ------------------------------------------------------------------------- token counts

/**
 * Codex's `TokenUsage`. `input_tokens` includes `cached_input_tokens`, `output_tokens` includes
 * `reasoning_output_tokens` (OpenAI's convention). `cache_write_input_tokens` exists since 0.146.
 */
export interface TokenUsage {
  readonly input_tokens: number;
  readonly cached_input_tokens: number;
  readonly output_tokens: number;
  readonly reasoning_output_tokens: number;
  readonly cache_write_input_tokens: number | undefined;
}

/** A TokenUsage, or undefined when a figure is missing, negative or not an exact integer. */
export function readTokenUsage(v: unknown): TokenUsage | undefined {
  if (!isObject(v)) return undefined;
  const input = countField(v, 'input_tokens');
  const output = countField(v, 'output_tokens');
  if (input === undefined || output === undefined) return undefined;
  // Absent sub-counts are zero (older builds); present but malformed ones make the record bad.
  const sub = (key: string): number | undefined | null => (v[key] === undefined || v[key] === null ? null : countField(v, key));
  const cached = sub('cached_input_tokens');
  const reasoning = sub('reasoning_output_tokens');
  const cacheWrite = sub('cache_write_input_tokens');
  if (cached === undefined || reasoning === undefined || cacheWrite === undefined) return undefined;
  return {
    input_tokens: input,
    cached_input_tokens: cached ?? 0,
    output_tokens: output,
    reasoning_output_tokens: reasoning ?? 0,
    cache_write_input_tokens: cacheWrite ?? undefined,
  };
}

/** Why a `total_token_usage` is no TokenUsage, naming the first figure that is wrong. */
export function tokenUsageFault(v: unknown, where: string): string {
  if (!isObject(v)) return `\`${where}\` is ${describeValue(v)}, not an object.`;
  for (const key of ['input_tokens', 'output_tokens']) {
    if (countField(v, key) === undefined) return `\`${where}.${key}\` is ${describeValue(v[key])}, not a non-negative integer.`;
  }
  for (const key of ['cached_input_tokens', 'reasoning_output_tokens', 'cache_write_input_tokens']) {
    if (v[key] !== undefined && v[key] !== null && countField(v, key) === undefined) return `\`${where}.${key}\` is ${describeValue(v[key])}, not a non-negative integer.`;
  }
  return `\`${where}\` is no token usage.`;
}

/** `event_msg` `token_count`. `info` is null on events that only carry rate limits. */
export type TokenCount =
  | { readonly kind: 'no_info' }
  | { readonly kind: 'invalid' }
  | { readonly kind: 'usage'; readonly total: TokenUsage; readonly contextWindowTokens: number | undefined };

/** Why a token_count with `info` is unreadable (readTokenCount said `invalid`). */
export function tokenCountFault(p: JsonObject): string {
  const info = p['info'];
  if (!isObject(info)) return `\`payload.info\` is ${describeValue(info)}, not an object or null.`;
  return tokenUsageFault(info['total_token_usage'], 'payload.info.total_token_usage');
}

export function readTokenCount(p: JsonObject): TokenCount {
  const info = p['info'];
  if (info === null || info === undefined) return { kind: 'no_info' };
  if (!isObject(info)) return { kind: 'invalid' };
  const total = readTokenUsage(info['total_token_usage']);
  if (total === undefined) return { kind: 'invalid' };
  return { kind: 'usage', total, contextWindowTokens: countField(info, 'model_context_window') };
}

// ------------------------------------------------------------------------- tool calls

/**
 * A tool call: `function_call` (`arguments` is a JSON *string*, sometimes invalid JSON),
 * `custom_tool_call` (freeform `input`, e.g. an apply_patch patch), `local_shell_call`
 * (`action.command` argv; the raw input is the action object's own text) or `web_search_call`
 * (a server-side tool without an output record).
 */
export type ToolCallItem =
  | { readonly kind: 'function_call'; readonly callId: string; readonly name: string; readonly arguments: string }
  | { readonly kind: 'custom_tool_call'; readonly callId: string; readonly name: string; readonly input: string }
  | { readonly kind: 'local_shell_call'; readonly callId: string | undefined; readonly status: string | undefined }
  | { readonly kind: 'web_search_call'; readonly callId: string | undefined; readonly status: string | undefined };

/** The tool-call item in a ResponseItem payload; undefined when it is not one or is malformed. */
export function readToolCall(p: JsonObject): ToolCallItem | undefined {
  switch (p['type']) {
    case 'function_call': {
      const callId = nonEmptyString(p, 'call_id');
      const name = nonEmptyString(p, 'name');
      const args = stringField(p, 'arguments');
      return callId && name && args !== undefined ? { kind: 'function_call', callId, name, arguments: args } : undefined;
    }
    case 'custom_tool_call': {
      const callId = nonEmptyString(p, 'call_id');
      const name = nonEmptyString(p, 'name');
      const input = stringField(p, 'input');
      return callId && name && input !== undefined ? { kind: 'custom_tool_call', callId, name, input } : undefined;
    }
    case 'local_shell_call': {
      const action = p['action'];
      if (!isObject(action) || !Array.isArray(action['command'])) return undefined;
      return { kind: 'local_shell_call', callId: nonEmptyString(p, 'call_id') ?? nonEmptyString(p, 'id'), status: stringField(p, 'status') };
    }
    case 'web_search_call':
      return isObject(p['action']) ? { kind: 'web_search_call', callId: nonEmptyString(p, 'id'), status: stringField(p, 'status') } : undefined;
    default:
      return undefined;
  }
}

/** Why a tool-call item is unreadable (readToolCall said no), naming the field. */
export function toolCallFault(p: JsonObject): string {
  const type = String(p['type']);
  const nonEmpty = (key: string): string | undefined => (nonEmptyString(p, key) === undefined ? `\`${key}\` of a ${type} is ${describeValue(p[key])}, not a non-empty string.` : undefined);
  switch (type) {
    case 'function_call':
    case 'custom_tool_call': {
      const textKey = type === 'function_call' ? 'arguments' : 'input';
      const text = stringField(p, textKey) === undefined ? `\`${textKey}\` of a ${type} is ${describeValue(p[textKey])}, not a string.` : undefined;
      return nonEmpty('call_id') ?? nonEmpty('name') ?? text ?? `The ${type} is unreadable.`;
    }
    case 'local_shell_call': {
      const action = p['action'];
      if (!isObject(action)) return `\`action\` of a local_shell_call is ${describeValue(action)}, not an object.`;
      return `\`action.command\` of a local_shell_call is ${describeValue(action['command'])}, not an array.`;
    }
    default:
      return `\`action\` of a ${type} is ${describeValue(p['action'])}, not an object.`;
  }
}

export const TOOL_CALL_TYPES: ReadonlySet<string> = new Set(['function_call', 'custom_tool_call', 'local_shell_call', 'web_search_call']);
export const TOOL_OUTPUT_TYPES: ReadonlySet<string> = new Set(['function_call_output', 'custom_tool_call_output']);

/** One content item of an output given as an array (`input_text`/`output_text`, `input_image`). */
export interface OutputContent {
  readonly text: string;
  readonly images: number;
  /** Codex's own success flag, when a build serialised `{"content","success"}`. */
  readonly success: boolean | undefined;
}

function readContentItems(items: readonly unknown[]): OutputContent {
  const texts: string[] = [];
  let images = 0;
  for (const item of items) {
    if (!isObject(item)) continue;
    const text = stringField(item, 'text');
    if (text !== undefined) texts.push(text);
    else if (item['type'] === 'input_image' || item['type'] === 'image') images++;
  }
  return { text: texts.join('\n'), images, success: undefined };
}

/**
 * The output of a `function_call_output` / `custom_tool_call_output`: a plain string (almost
 * always), an array of content items, a single content item, or `{"content","success"}`.
 */
export function readOutputContent(v: unknown): OutputContent | undefined {
  if (typeof v === 'string') return { text: v, images: 0, success: undefined };
  if (Array.isArray(v)) return readContentItems(v);
  if (!isObject(v)) return undefined;
  const success = typeof v['success'] === 'boolean' ? v['success'] : undefined;
  const content = v['content'];
  if (typeof content === 'string') return { text: content, images: 0, success };
  if (Array.isArray(content)) return { ...readContentItems(content), success };
  if ('type' in v) return readContentItems([v]);
  return undefined;
}

export interface ToolOutput {
  readonly callId: string;
  readonly content: OutputContent;
}

/** Why a tool output item is unreadable (readToolOutput said no), naming the field. */
export function toolOutputFault(p: JsonObject): string {
  const type = String(p['type']);
  if (nonEmptyString(p, 'call_id') === undefined) return `\`call_id\` of a ${type} is ${describeValue(p['call_id'])}, not a non-empty string.`;
  return `\`output\` of a ${type} is ${describeValue(p['output'])}, not a string, content items or {content, success}.`;
}

export function readToolOutput(p: JsonObject): ToolOutput | undefined {
  const callId = nonEmptyString(p, 'call_id');
  const content = readOutputContent(p['output']);
  return callId === undefined || content === undefined ? undefined : { callId, content };
}

// ------------------------------------------------------------------------- end events

/**
 * What an "Extended"-persistence end event (`exec_command_end`, `mcp_tool_call_end`,
 * `patch_apply_end`) says of a call: the real outcome, which the output text only implies.
 */
export interface CallEnd {
  readonly callId: string;
  readonly failed: boolean | undefined;
  readonly durationMs: number | undefined;
  readonly detail: string | undefined;
}

/** `{secs, nanos}` (serde's Duration) as whole milliseconds. */
function readDurationMs(v: unknown): number | undefined {
  if (!isObject(v)) return undefined;
  const secs = countField(v, 'secs');
  const nanos = countField(v, 'nanos') ?? 0;
  return secs === undefined ? undefined : secs * 1000 + Math.round(nanos / 1e6);
}

export const END_EVENT_TYPES: ReadonlySet<string> = new Set(['exec_command_end', 'mcp_tool_call_end', 'patch_apply_end']);

export function readCallEnd(p: JsonObject): CallEnd | undefined {
  const callId = nonEmptyString(p, 'call_id');
  if (callId === undefined) return undefined;
  const durationMs = readDurationMs(p['duration']);
  switch (p['type']) {
    case 'exec_command_end': {
      const exit = p['exit_code'];
      const failed = typeof exit === 'number' ? exit !== 0 : undefined;
      return { callId, failed, durationMs, detail: failed ? `exit code ${String(exit)}` : undefined };
    }
    case 'mcp_tool_call_end': {
      const result = p['result'];
      if (!isObject(result)) return { callId, failed: undefined, durationMs, detail: undefined };
      const ok = result['Ok'];
      if (isObject(ok)) return { callId, failed: ok['isError'] === true, durationMs, detail: ok['isError'] === true ? 'MCP isError' : undefined };
      const err = result['Err'];
      if (err !== undefined) return { callId, failed: true, durationMs, detail: typeof err === 'string' ? err : 'MCP error' };
      return { callId, failed: undefined, durationMs, detail: undefined };
    }
    case 'patch_apply_end': {
      const success = p['success'];
      return { callId, failed: typeof success === 'boolean' ? !success : undefined, durationMs, detail: success === false ? stringField(p, 'stderr') || 'patch failed' : undefined };
    }
    default:
      return undefined;
  }
}
