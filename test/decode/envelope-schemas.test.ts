// One source for what the envelope schemas share: the harness list is HARNESSES, the common
// fields' rules those of the tool-call schema. The files are checked in (producers read them),
// so this test is what tells a change to HARNESSES to run scripts/sync-schemas.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HARNESSES } from '../../src/canonical/meta.ts';
import { ENVELOPE_TYPES_PATH, envelopeTypesText, readSchemaText, SCHEMA_FILES, syncedSchemaText } from '../../src/decode/envelope-schemas.ts';
import { decodeEvent, nowClickHouseTime, DEFAULT_LIMITS } from '../../src/decode/event.ts';
import { AJV_OPTIONS, VALIDATORS_PATH, validatorsText } from '../../src/decode/validator-code.ts';
import * as compiled from '../../src/decode/validators.generated.ts';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { listInputFiles } from '../../src/source/file.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

describe('envelope schemas', () => {
  it('are every file in schemas/ and no other', () => {
    expect(Object.values(SCHEMA_FILES).sort()).toEqual(readdirSync(`${ROOT}schemas`).filter((f) => f.endsWith('.schema.json')).sort());
  });

  it.each(Object.values(SCHEMA_FILES))('%s is in sync with HARNESSES and the shared field rules (else: npx tsx scripts/sync-schemas.ts)', (file) => {
    expect(readSchemaText(file)).toBe(syncedSchemaText(file));
    const props = (JSON.parse(readSchemaText(file)) as { properties: Record<string, { enum?: string[] }> }).properties;
    expect(props['harness']?.enum).toEqual([...HARNESSES]);
  });

  it('a schema out of step is rewritten: a harness missing from a file, a shared rule changed', () => {
    const file = SCHEMA_FILES.usage;
    const drifted = JSON.parse(readSchemaText(file)) as { properties: Record<string, Record<string, unknown>> };
    drifted.properties['harness'] = { enum: ['codex'] };
    drifted.properties['session_id'] = { ...drifted.properties['session_id'], maxLength: 9 };
    const text = (f: string): string => (f === file ? JSON.stringify(drifted, null, 2) : readSchemaText(f));
    const fixed = JSON.parse(syncedSchemaText(file, text)) as typeof drifted;
    expect(fixed.properties['harness']?.['enum']).toEqual([...HARNESSES]);
    expect(fixed.properties['session_id']?.['maxLength']).toBe(256);
  });

  it('the envelope types (src/decode/envelope-types.ts) are derived from the schemas as they are (else: npx tsx scripts/sync-schemas.ts)', () => {
    expect(readFileSync(ENVELOPE_TYPES_PATH, 'utf8')).toBe(envelopeTypesText());
  });

  it('a field added to a schema appears in its type: required or optional as the schema says, its enum as a union', () => {
    const file = SCHEMA_FILES.usage;
    const grown = JSON.parse(readSchemaText(file)) as { required: string[]; properties: Record<string, unknown> };
    grown.properties['tier'] = { description: 'A new field.', enum: ['free', "it's paid"] };
    grown.properties['region'] = { type: 'string' };
    grown.required.push('region');
    const text = envelopeTypesText((f) => (f === file ? JSON.stringify(grown) : readSchemaText(f)));
    const usage = text.slice(text.indexOf('export type UsageEvent'), text.indexOf('export type McpStatusEvent'));
    expect(usage).toContain("  /** A new field. */\n  readonly tier?: 'free' | 'it\\'s paid';\n");
    expect(usage).toContain('  readonly region: string;\n');
    expect(usage).toContain('  readonly harness: Harness;\n');
    expect(usage).toContain('  readonly input_tokens: number;\n');
    expect(usage).toContain('  readonly cache_read_tokens?: number;\n');
  });

  it.each(HARNESSES)('every harness of the list is accepted by the decoder: %s', (harness) => {
    const line = JSON.stringify({ schema: 'toolcanon.event/v1', type: 'tool_call', ts: '2026-12-03T10:00:00Z', harness, session_id: 's', call_id: 'c', tool: 'read_file', input: {}, status: 'ok' });
    const o = decodeEvent(Buffer.from(line), 'test:1', nowClickHouseTime(), DEFAULT_LIMITS);
    expect(o.kind, o.kind === 'dead' ? o.dead.detail : '').toBe('row');
  });

  it('the compiled validators (src/decode/validators.generated.ts) are those of the schemas as they are (else: npx tsx scripts/sync-schemas.ts)', () => {
    expect(readFileSync(VALIDATORS_PATH, 'utf8')).toBe(validatorsText());
    // A rule changed in a schema changes the code.
    const file = SCHEMA_FILES.usage;
    const changed = JSON.parse(readSchemaText(file)) as { properties: Record<string, Record<string, unknown>> };
    changed.properties['model'] = { ...changed.properties['model'], maxLength: 7 };
    expect(validatorsText((f) => (f === file ? JSON.stringify(changed) : readSchemaText(f)))).not.toBe(validatorsText());
  });

  it('the compiled validators judge every shipped event and every mutation of it as ajv compiling the schemas in process does', () => {
    const ajv = new Ajv2020(AJV_OPTIONS);
    const inProcess = Object.fromEntries(Object.entries(SCHEMA_FILES).map(([type, f]) => [type, ajv.compile(JSON.parse(readSchemaText(f)) as object)])) as Record<string, ValidateFunction>;
    const generated = compiled as unknown as Record<string, ValidateFunction>;
    const judge = (v: ValidateFunction, event: unknown): string => (v(event) ? 'valid' : JSON.stringify(v.errors?.[0]));
    const mutations = (e: Record<string, unknown>): unknown[] => {
      const out: unknown[] = [];
      for (const k of Object.keys(e)) {
        const { [k]: _dropped, ...without } = e;
        out.push(without, { ...e, [k]: null }, { ...e, [k]: 42 }, { ...e, [k]: 'x'.repeat(300) }, { ...e, [k]: [] }, { ...e, [k]: -1 });
      }
      out.push({ ...e, extra: 1 });
      return out;
    };
    let judged = 0;
    let invalid = 0;
    for (const f of listInputFiles([`${ROOT}fixtures`])) {
      for (const line of readFileSync(f.path, 'utf8').split('\n')) {
        let e: unknown;
        try {
          e = JSON.parse(line);
        } catch {
          continue;
        }
        if (typeof e !== 'object' || e === null || Array.isArray(e)) continue;
        const type = (e as { type?: unknown }).type;
        if (typeof type !== 'string' || !(type in inProcess)) continue;
        for (const candidate of [e, ...mutations(e as Record<string, unknown>)]) {
          const want = judge(inProcess[type] as ValidateFunction, candidate);
          expect(judge(generated[type] as ValidateFunction, candidate)).toBe(want);
          judged++;
          if (want !== 'valid') invalid++;
        }
      }
    }
    expect(judged).toBeGreaterThan(10_000);
    expect(invalid).toBeGreaterThan(judged / 2);
  });
});
