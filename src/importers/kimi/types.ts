// The records of Kimi CLI's and Kimi Code's wire.jsonl that the importer reads, and the readers
// of their token figures (both generations use kosong's TokenUsage buckets). See README.md.
import { isObject, type JsonObject } from '../json.ts';
import { describeValue } from '../lines.ts';

/**
 * Kosong's TokenUsage (MoonshotAI/kimi-cli packages/kosong/src/kosong/chat_provider/__init__.py):
 * `input_other` excludes both cache buckets (input = input_other + cache read + cache creation);
 * `output` is the whole completion, reasoning inside. Kimi Code writes the same in camelCase.
 */
export interface KimiUsage {
  readonly inputOther: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheCreation: number;
}

/** The member names of each generation: legacy snake_case, Kimi Code camelCase. */
const NAMES = {
  legacy: { inputOther: 'input_other', output: 'output', cacheRead: 'input_cache_read', cacheCreation: 'input_cache_creation' },
  code: { inputOther: 'inputOther', output: 'output', cacheRead: 'inputCacheRead', cacheCreation: 'inputCacheCreation' },
} as const;

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** The usage object of a record, or what is wrong with it (`where` prefixes the member names). */
export function readUsage(value: unknown, generation: 'legacy' | 'code', where: string): KimiUsage | { fault: string } {
  if (!isObject(value)) return { fault: `\`${where}\` is ${describeValue(value)}, not an object.` };
  const names = NAMES[generation];
  const out: Record<keyof KimiUsage, number> = { inputOther: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
  for (const key of Object.keys(names) as (keyof KimiUsage)[]) {
    const v = value[names[key]];
    // A bucket a provider does not report is absent (kosong defaults it to 0).
    if (v === undefined || v === null) continue;
    if (!isCount(v)) return { fault: `\`${where}.${names[key]}\` is ${describeValue(v)}, not a non-negative integer.` };
    out[key] = v;
  }
  return out;
}

export function isZero(u: KimiUsage): boolean {
  return u.inputOther === 0 && u.output === 0 && u.cacheRead === 0 && u.cacheCreation === 0;
}

/** A time in epoch milliseconds (Kimi Code's `time`) as RFC 3339, or undefined. */
export function msTime(v: unknown): string | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 && v < 253402300800000 ? new Date(Math.floor(v)).toISOString() : undefined;
}

/** A time in epoch seconds, fractional (legacy `timestamp`), as RFC 3339, or undefined. */
export function secondsTime(v: unknown): string | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 && v < 253402300800 ? new Date(Math.floor(v * 1000)).toISOString() : undefined;
}

/** The prefix Kimi Code gives MCP tools (`mcp__<server>__<tool>`, the active-tools pattern `mcp__*`). */
export const MCP_PREFIX = 'mcp__';

/** A tool's name as the events carry it: Kimi Code's `mcp__server__tool` as `server__tool`. */
export function toolName(name: string): string {
  return name.startsWith(MCP_PREFIX) && name.length > MCP_PREFIX.length ? name.slice(MCP_PREFIX.length) : name;
}

/** A tool result's outcome: Kimi Code `result.isError` (or the event's), legacy `return_value.is_error`. */
export interface KimiResult {
  readonly isError: boolean;
  readonly output?: string;
  readonly message?: string;
}

/** Text of a result's output: a string as is, content parts' text joined, else its JSON. */
export function outputText(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    const texts = v.filter((p): p is JsonObject => isObject(p) && typeof p['text'] === 'string').map((p) => p['text'] as string);
    if (texts.length > 0) return texts.join('\n');
  }
  return JSON.stringify(v);
}

/** Record types read only for context or carrying nothing the events hold, counted per type when skipped. */
export const CONTEXT_TYPES: ReadonlySet<string> = new Set([
  // Kimi Code
  'metadata', 'config.update', 'tools.set_active_tools', 'turn.prompt', 'turn.steer', 'turn.cancel', 'turn.ended', 'context.append_message',
  'llm.request', 'llm.tools_snapshot', 'permission.record_approval_result', 'permission.set_mode', 'plan_mode.enter', 'plan_mode.exit',
  'full_compaction.begin', 'full_compaction.complete', 'context.apply_compaction', 'token_counting.measured', 'token_counting.turn_recorded',
  'profile.bind', 'runtime.set_binding', 'plugin.session_start',
  // legacy Kimi CLI
  'TurnBegin', 'TurnEnd', 'StepBegin', 'StepInterrupted', 'StepRetry', 'CompactionBegin', 'CompactionEnd', 'ContentPart', 'ApprovalRequest',
  'ApprovalResponse', 'Notification', 'HookTriggered', 'HookResolved', 'PlanDisplay',
]);
