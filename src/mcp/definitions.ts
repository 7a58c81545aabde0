// What a tool costs before it is called (SPEC §4, §6): its definition as the model receives it, the
// compact JSON `{"name":…,"description":…,"input_schema":…}` (qualified name; keys in that order;
// input_schema's own keys in the order the snapshot listed them; no whitespace; non-ASCII
// characters as they are, not escaped), measured in UTF-8 bytes and estimated at bytes / 4 tokens
// (integer division), the local estimate of SPEC §4.
//
// input_schema is compacted from its raw JSON text, never from a parsed value: JSON.parse moves
// integer-like keys ("2", "10") to the front and rewrites numbers (1.0 → 1, 1e2 → 100, beyond
// 2^53 rounded), and the model receives neither change. Whitespace outside strings is dropped;
// each string (keys too) is read and written again as JSON.stringify writes it: `\u00e9` becomes
// `é`, `\/` becomes `/`, control characters and lone surrogates stay escaped.
import { estimateTokensFromBytes } from '../accounting/arithmetic.ts';

/** A tool's definition size, or null when the snapshot listed neither description nor schema. */
export interface DefinitionSize {
  readonly bytes: number;
  readonly tokens: number;
}

const Q = 34; // "
const BS = 92; // \

/** The value's JSON text (from `start` to `end`) without whitespace, strings re-encoded. */
export function compactJson(text: string, start = 0, end = text.length): string {
  let out = '';
  let i = start;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c === Q) {
      // The string literal: to the next quote not escaped.
      let j = i + 1;
      let escaped = false;
      while (j < end) {
        const d = text.charCodeAt(j);
        if (d === BS) {
          escaped = true;
          j += 2;
          continue;
        }
        if (d === Q) break;
        j++;
      }
      const literal = text.slice(i, j + 1);
      // Without an escape the literal is already what JSON.stringify writes (a valid line has no raw control character).
      out += escaped ? JSON.stringify(JSON.parse(literal) as string) : literal;
      i = j + 1;
      continue;
    }
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) out += text[i];
    i++;
  }
  return out;
}

/** The compact JSON of a tool's definition. `inputSchemaJson`: input_schema's JSON text as received. */
export function definitionJson(qualifiedName: string, description: string | undefined, inputSchemaJson: string | undefined): string {
  let json = `{"name":${JSON.stringify(qualifiedName)}`;
  if (description !== undefined) json += `,"description":${JSON.stringify(description)}`;
  if (inputSchemaJson !== undefined) json += `,"input_schema":${compactJson(inputSchemaJson)}`;
  return `${json}}`;
}


/**
 * The size of a tool's definition; null when the snapshot gave only the name (its definition is
 * not known: a name alone would understate it).
 */
export function definitionSize(qualifiedName: string, description: string | undefined, inputSchemaJson: string | undefined): DefinitionSize | null {
  if (description === undefined && inputSchemaJson === undefined) return null;
  const bytes = Buffer.byteLength(definitionJson(qualifiedName, description, inputSchemaJson), 'utf8');
  return { bytes, tokens: estimateTokensFromBytes(bytes) };
}
