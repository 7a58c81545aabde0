// Rewrites the shared parts of schemas/*.schema.json (harness list, common field rules) from
// their one source (src/decode/envelope-schemas.ts), then the envelope types derived from the
// schemas (src/decode/envelope-types.ts) and their compiled validators
// (src/decode/validators.generated.ts). Usage: npx tsx scripts/sync-schemas.ts [--check]
import { readFileSync, writeFileSync } from 'node:fs';
import { ENVELOPE_TYPES_PATH, envelopeTypesText, readSchemaText, SCHEMA_FILES, schemaPath, syncedSchemaText } from '../src/decode/envelope-schemas.ts';
import { VALIDATORS_PATH, validatorsText } from '../src/decode/validator-code.ts';

const check = process.argv.includes('--check');
let stale = 0;
const sync = (name: string, path: URL, now: string, want: string): void => {
  if (want === now) return;
  stale++;
  if (check) console.error(`${name} is out of date: run npx tsx scripts/sync-schemas.ts`);
  else {
    writeFileSync(path, want);
    console.log(`Rewrote ${name}`);
  }
};
for (const file of Object.values(SCHEMA_FILES)) sync(`schemas/${file}`, schemaPath(file), readSchemaText(file), syncedSchemaText(file));
// From the schemas as they are now (just rewritten, unless --check).
const texts = (file: string): string => (check ? syncedSchemaText(file) : readSchemaText(file));
/** A generated file's text as it is now ('' when it does not exist yet: it is written below). */
const current = (path: URL): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};
sync('src/decode/envelope-types.ts', ENVELOPE_TYPES_PATH, current(ENVELOPE_TYPES_PATH), envelopeTypesText(texts));
sync('src/decode/validators.generated.ts', VALIDATORS_PATH, current(VALIDATORS_PATH), validatorsText(texts));
process.exitCode = check && stale ? 1 : 0;
