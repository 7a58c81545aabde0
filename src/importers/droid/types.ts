// The settings file's session totals, and the record types of a Droid transcript (README.md).
import { isObject } from '../json.ts';
import { describeValue } from '../lines.ts';

/** `<session>.settings.json` `tokenUsage`: the session's running totals (no per-request figures exist). */
export interface SessionTotals {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheCreation: number;
  readonly thinking: number;
  readonly model: string | undefined;
}

const FIELDS = { input: 'inputTokens', output: 'outputTokens', cacheRead: 'cacheReadTokens', cacheCreation: 'cacheCreationTokens', thinking: 'thinkingTokens' } as const;

/** The totals of a settings file's text; undefined without tokenUsage; a fault when unreadable. */
export function readSettings(text: string | undefined): SessionTotals | { fault: string } | undefined {
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return { fault: 'The settings file is not valid JSON.' };
  }
  if (!isObject(v)) return { fault: `The settings file is ${describeValue(v)}, not an object.` };
  const usage = v['tokenUsage'];
  if (usage === undefined || usage === null) return undefined;
  if (!isObject(usage)) return { fault: `\`tokenUsage\` is ${describeValue(usage)}, not an object.` };
  const out = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0, thinking: 0 };
  for (const key of Object.keys(FIELDS) as (keyof typeof FIELDS)[]) {
    const n = usage[FIELDS[key]];
    if (n === undefined || n === null) continue;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return { fault: `\`tokenUsage.${FIELDS[key]}\` is ${describeValue(n)}, not a non-negative integer.` };
    out[key] = n;
  }
  const model = v['model'];
  return { ...out, model: typeof model === 'string' && model !== '' && model.length <= 256 ? model : undefined };
}

/** Transcript record types read for context or carrying nothing the events hold. */
export const COUNTED_TYPES: ReadonlySet<string> = new Set(['session_start', 'todo_state', 'compaction_state']);
