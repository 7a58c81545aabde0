// Rewrites the shared parts of schemas/*.schema.json (harness list, common field rules) from
// their one source (src/decode/envelope-schemas.ts). Usage: npx tsx scripts/sync-schemas.ts [--check]
import { writeFileSync } from 'node:fs';
import { readSchemaText, SCHEMA_FILES, schemaPath, syncedSchemaText } from '../src/decode/envelope-schemas.ts';

const check = process.argv.includes('--check');
let stale = 0;
for (const file of Object.values(SCHEMA_FILES)) {
  const want = syncedSchemaText(file);
  if (want === readSchemaText(file)) continue;
  stale++;
  if (check) console.error(`schemas/${file} is out of date: run npx tsx scripts/sync-schemas.ts`);
  else {
    writeFileSync(schemaPath(file), want);
    console.log(`Rewrote schemas/${file}`);
  }
}
process.exitCode = check && stale ? 1 : 0;
