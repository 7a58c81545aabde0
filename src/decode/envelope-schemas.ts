// The envelope's JSON Schemas (schemas/*.schema.json) are the contract producers in any language
// read, so each stays one self-contained file. What they share is written from one place: the
// harness list is HARNESSES (src/canonical/meta.ts) and the common fields' rules are those of
// the tool-call schema. `npx tsx scripts/sync-schemas.ts` rewrites the files; a test fails while one differs.
import { readFileSync } from 'node:fs';
import { HARNESSES } from '../canonical/meta.ts';

/** Every envelope schema, by event type. */
export const SCHEMA_FILES = {
  tool_call: 'tool-call-event.v1.schema.json',
  usage: 'usage-event.v1.schema.json',
  mcp_status: 'mcp-status-event.v1.schema.json',
  mcp_tools: 'mcp-tools-event.v1.schema.json',
  mcp_tools_changed: 'mcp-tools-changed-event.v1.schema.json',
} as const;

/** Fields every envelope carries with the same rules (descriptions may say more per type). */
const SHARED_FIELDS = ['schema', 'ts', 'session_id', 'event_id', 'host', 'device_id'] as const;
const RULE_SOURCE = SCHEMA_FILES.tool_call;

export function schemaPath(file: string): URL {
  return new URL(`../../schemas/${file}`, import.meta.url);
}

export function readSchemaText(file: string): string {
  return readFileSync(schemaPath(file), 'utf8');
}

type Json = Record<string, unknown>;

function properties(schema: Json, file: string): Json {
  const p = schema['properties'];
  if (typeof p !== 'object' || p === null) throw new Error(`${file}: no properties`);
  return p as Json;
}

/**
 * The schema file's text as it must be: the harness enum from HARNESSES, the shared fields'
 * rules from the tool-call schema (their descriptions kept), formatted as the files are.
 */
export function syncedSchemaText(file: string, texts: (f: string) => string = readSchemaText): string {
  const schema = JSON.parse(texts(file)) as Json;
  const props = properties(schema, file);
  const harness = (props['harness'] ?? {}) as Json;
  props['harness'] = { ...harness, enum: [...HARNESSES] };
  const source = properties(JSON.parse(texts(RULE_SOURCE)) as Json, RULE_SOURCE);
  for (const field of SHARED_FIELDS) {
    const rules = { ...(source[field] as Json) };
    delete rules['description'];
    const own = (props[field] ?? {}) as Json;
    props[field] = own['description'] === undefined ? rules : { description: own['description'], ...rules };
  }
  return `${JSON.stringify(schema, null, 2)}\n`;
}
