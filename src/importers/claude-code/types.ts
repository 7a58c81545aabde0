// Narrow types of the Claude Code transcript records the importer reads, with type guards that
// check only what the parser relies on (the format is internal to Claude Code and changes).
import { describeValue } from '../lines.ts';

/** A parsed JSON object whose members are still unknown. */
export type JsonObject = Readonly<Record<string, unknown>>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A member that is a string, or undefined. */
export function stringMember(o: JsonObject, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'string' ? v : undefined;
}

/** A member that is a non-negative safe integer (a token count), or undefined. */
export function countMember(o: JsonObject, key: string): number | undefined {
  const v = o[key];
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/**
 * Envelope members shared by user / assistant / progress / system lines. Every member is
 * optional (absent or null): a record without them is still read, with fallbacks chosen by the
 * parser.
 */
export interface RawEnvelope {
  readonly type: string;
  readonly uuid?: string | null;
  readonly sessionId?: string | null;
  readonly timestamp?: string | null;
  readonly isSidechain?: boolean | null;
  readonly agentId?: string | null;
  readonly isMeta?: boolean | null;
  readonly isCompactSummary?: boolean | null;
}

/** `message.usage` of an assistant line (Anthropic semantics: cache figures are separate). */
export interface RawUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_creation_input_tokens?: number;
  readonly cache_read_input_tokens?: number;
}

/** `{"type":"tool_use","id":"toolu_…","name":"Bash","input":{…}}` inside an assistant message. */
export interface RawToolUseBlock {
  readonly type: 'tool_use';
  readonly id: string;
  readonly name: string;
  readonly input?: unknown;
}

/** `{"type":"tool_result","tool_use_id":"toolu_…","content":…,"is_error":true}` in a user message. */
export interface RawToolResultBlock {
  readonly type: 'tool_result';
  readonly tool_use_id: string;
  /** A string, or an array of blocks (`text`, `image`, …). */
  readonly content?: unknown;
  readonly is_error?: unknown;
}

/** The members of an assistant line's `message` that the parser reads. */
export interface RawAssistantMessage {
  readonly id?: string | null;
  readonly model?: string | null;
  /** Content blocks; one per line in 2.1.x transcripts (streaming split), more in older ones. */
  readonly content: readonly unknown[];
  readonly usage?: unknown;
}

export interface RawAssistantRecord extends RawEnvelope {
  readonly type: 'assistant';
  readonly message: RawAssistantMessage;
  readonly requestId?: string | null;
}

export interface RawUserRecord extends RawEnvelope {
  readonly type: 'user';
  readonly message: { readonly content: string | readonly unknown[] };
}

function isOptional(o: JsonObject, key: string, type: 'string' | 'boolean'): boolean {
  const v = o[key];
  return v === undefined || v === null || typeof v === type;
}

const ENVELOPE_STRINGS = ['uuid', 'sessionId', 'timestamp', 'agentId'] as const;
const ENVELOPE_BOOLEANS = ['isSidechain', 'isMeta', 'isCompactSummary'] as const;

/**
 * Why a JSON object is no envelope, as a sentence naming the field (for a malformed record);
 * undefined when it is one: a string `type`, and envelope members of their types when present.
 */
export function envelopeFault(value: JsonObject): string | undefined {
  if (typeof value['type'] !== 'string') return `\`type\` is ${describeValue(value['type'])}, not a string.`;
  const key = ENVELOPE_STRINGS.find((k) => !isOptional(value, k, 'string')) ?? ENVELOPE_BOOLEANS.find((k) => !isOptional(value, k, 'boolean'));
  if (key === undefined) return undefined;
  const wanted = (ENVELOPE_STRINGS as readonly string[]).includes(key) ? 'a string' : 'a boolean';
  return `\`${key}\` is ${describeValue(value[key])}, not ${wanted}.`;
}

/** A JSON object with a string `type` whose envelope members, when present, have their types. */
export function isEnvelope(value: unknown): value is RawEnvelope {
  return isJsonObject(value) && envelopeFault(value) === undefined;
}

/** Why an `assistant` record cannot be read, as a sentence naming the field; undefined when it can. */
export function assistantFault(record: RawEnvelope): string | undefined {
  const o: JsonObject = record as unknown as JsonObject;
  const message = o['message'];
  if (!isJsonObject(message)) return `\`message\` is ${describeValue(message)}, not an object.`;
  if (!Array.isArray(message['content'])) return `\`message.content\` is ${describeValue(message['content'])}, not an array.`;
  if (!isOptional(message, 'id', 'string')) return `\`message.id\` is ${describeValue(message['id'])}, not a string.`;
  if (!isOptional(message, 'model', 'string')) return `\`message.model\` is ${describeValue(message['model'])}, not a string.`;
  if (!isOptional(o, 'requestId', 'string')) return `\`requestId\` is ${describeValue(o['requestId'])}, not a string.`;
  return undefined;
}

export function isAssistantRecord(record: RawEnvelope): record is RawAssistantRecord {
  return record.type === 'assistant' && assistantFault(record) === undefined;
}

/** Why a `user` record cannot be read, as a sentence naming the field; undefined when it can. */
export function userFault(record: RawEnvelope): string | undefined {
  const message = (record as unknown as JsonObject)['message'];
  if (!isJsonObject(message)) return `\`message\` is ${describeValue(message)}, not an object.`;
  const content = message['content'];
  if (typeof content !== 'string' && !Array.isArray(content)) return `\`message.content\` is ${describeValue(content)}, not a string or an array.`;
  return undefined;
}

export function isUserRecord(record: RawEnvelope): record is RawUserRecord {
  return record.type === 'user' && userFault(record) === undefined;
}

export function isToolUseBlock(block: unknown): block is RawToolUseBlock {
  return isJsonObject(block) && block['type'] === 'tool_use' && typeof block['id'] === 'string' && block['id'] !== '' && typeof block['name'] === 'string' && block['name'] !== '';
}

/** Why a block of type `tool_use` is no tool call (its id or name missing), as a sentence. */
export function toolUseFault(block: JsonObject): string {
  const key = typeof block['id'] !== 'string' || block['id'] === '' ? 'id' : 'name';
  return `A tool_use block's \`${key}\` is ${describeValue(block[key])}, not a non-empty string.`;
}

export function isToolResultBlock(block: unknown): block is RawToolResultBlock {
  return isJsonObject(block) && block['type'] === 'tool_result' && typeof block['tool_use_id'] === 'string' && block['tool_use_id'] !== '';
}

/** Why `message.usage` is no usage (not an object, or a required count missing or not a count). */
export function usageFault(value: unknown): string {
  if (!isJsonObject(value)) return `\`message.usage\` is ${describeValue(value)}, not an object.`;
  const key = countMember(value, 'input_tokens') === undefined ? 'input_tokens' : 'output_tokens';
  return `\`message.usage.${key}\` is ${describeValue(value[key])}, not a non-negative integer.`;
}

/** A usage object with the two required counts as non-negative integers; undefined otherwise. */
export function toUsage(value: unknown): RawUsage | undefined {
  if (!isJsonObject(value)) return undefined;
  const input = countMember(value, 'input_tokens');
  const output = countMember(value, 'output_tokens');
  if (input === undefined || output === undefined) return undefined;
  const cacheWrite = countMember(value, 'cache_creation_input_tokens');
  const cacheRead = countMember(value, 'cache_read_input_tokens');
  return {
    input_tokens: input,
    output_tokens: output,
    ...(cacheWrite === undefined ? {} : { cache_creation_input_tokens: cacheWrite }),
    ...(cacheRead === undefined ? {} : { cache_read_input_tokens: cacheRead }),
  };
}

/**
 * Record types seen in transcripts that never carry a tool call or a usage of their own.
 * `progress` lines embed copies of subagent messages (`data.message`): counting them would
 * count the subagent's work twice, since its own transcript is imported too.
 */
export const IGNORED_RECORD_TYPES = [
  'progress',
  'system',
  'file-history-snapshot',
  'queue-operation',
  'summary',
  'attachment',
  'permission-mode',
  'custom-title',
  'ai-title',
  'last-prompt',
  'pr-link',
  'worktree-state',
] as const;
