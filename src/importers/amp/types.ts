// The parts of an Amp thread document the importer reads: assistant usage, tool_use blocks and
// tool_result blocks (see README.md).
import { isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';
import { describeValue } from '../lines.ts';

/** An assistant message's `usage` as Amp labels it (Anthropic buckets: input excludes the cache). */
export interface AmpUsage {
  readonly model: string | undefined;
  readonly timestamp: string | undefined;
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheCreation: number;
}

const FIELDS = { input: 'inputTokens', output: 'outputTokens', cacheRead: 'cacheReadInputTokens', cacheCreation: 'cacheCreationInputTokens' } as const;

export function readUsage(value: unknown, where: string): AmpUsage | { fault: string } {
  if (!isObject(value)) return { fault: `\`${where}\` is ${describeValue(value)}, not an object.` };
  const out = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
  for (const key of Object.keys(FIELDS) as (keyof typeof FIELDS)[]) {
    const v = value[FIELDS[key]];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return { fault: `\`${where}.${FIELDS[key]}\` is ${describeValue(v)}, not a non-negative integer.` };
    out[key] = v;
  }
  const model = value['model'];
  if (model !== undefined && model !== null && (typeof model !== 'string' || model.length > MAX_ID_CHARS)) return { fault: `\`${where}.model\` is ${describeValue(model)}, not a model name.` };
  const ts = value['timestamp'];
  return { ...out, model: typeof model === 'string' && model !== '' ? model : undefined, timestamp: typeof ts === 'string' ? ts : undefined };
}

/**
 * OpenAI-family models (`gpt-*`): Amp writes `inputTokens: 0` and the whole uncached prompt as
 * `cacheCreationInputTokens` (agentsview `ampFoldsCacheCreationIntoInput`; OpenAI bills no cache
 * write): that figure is uncached input.
 */
export function foldsCacheCreationIntoInput(model: string | undefined): boolean {
  return model !== undefined && model.startsWith('gpt-');
}

/** A tool result's block: `toolUseID` (current) or `tool_use_id` (other writers). */
export function resultCallId(block: JsonObject): unknown {
  return block['toolUseID'] ?? block['tool_use_id'];
}

/** `run.status` values that end a call, and how: done is ok; the others failed or never ran. */
export const FAILED_STATUSES: ReadonlySet<string> = new Set(['error', 'cancelled', 'rejected-by-user', 'cancelled-by-user', 'failed']);

/** Text of a run's result (tool-shaped: Bash {output, exitCode}, Read {content}, edit {diff}, or a string / array). */
export function resultText(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (isObject(v)) {
    for (const k of ['output', 'content', 'diff', 'text']) if (typeof v[k] === 'string') return v[k] as string;
  }
  if (Array.isArray(v)) {
    const texts = v.filter((p): p is JsonObject => isObject(p) && typeof p['text'] === 'string').map((p) => p['text'] as string);
    if (texts.length > 0) return texts.join('\n');
  }
  return JSON.stringify(v);
}
