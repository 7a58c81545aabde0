// What every importer's reader of raw JSON records shares: an object whose members are still
// unknown, and ids (session, call, tool name, model) as the envelope takes them.
import { describeValue } from './lines.ts';

/** A parsed JSON object whose members are still unknown. */
export type JsonObject = Readonly<Record<string, unknown>>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Longest id, tool name or model the envelope takes (its schema's `maxLength`). */
export const MAX_ID_CHARS = 256;

/** A member that is a non-empty string of at most MAX_ID_CHARS, or undefined. */
export function idMember(o: JsonObject, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'string' && v !== '' && v.length <= MAX_ID_CHARS ? v : undefined;
}

/** Why a member is no id, as a sentence (`where` prefixes the member's name: `data.`). */
export function idFault(o: JsonObject, key: string, where = ''): string {
  const v = o[key];
  const what = typeof v === 'string' && v.length > MAX_ID_CHARS ? `a string of ${v.length} characters` : describeValue(v);
  return `\`${where}${key}\` is ${what}, not a non-empty string of at most ${MAX_ID_CHARS} characters.`;
}
