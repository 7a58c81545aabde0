// Every registered importer's fixture folder against its golden events (issue 31 step 4: the
// golden test loops over the registry): the importer's output on test/importers/fixtures-<id>/,
// reviewed when written (UPDATE_GOLDEN=1 rewrites it), kept in the folder as events.golden.jsonl
// or, where the importer would read a file there as its own, in golden/<id>/fixtures.golden.jsonl.
// The Cline family's goldens keep their own lines (cline-family.ts). Every importer has a golden:
// of its fixtures, or of real samples in golden/<id>/ (written by its own test).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadImporter } from '../../src/importers/registry.ts';
import { IMPORTER_IDS } from '../../src/importers/types.ts';
import { expectFolderGolden, GOLDEN_DIR } from './golden.ts';

const ROOT_DIR = new URL('../../', import.meta.url).pathname;
/** Their goldens are written and compared by describeFamily (cline-family.ts), in its own lines. */
const CLINE_FAMILY = new Set(['cline', 'roo-code', 'kilo-code']);

describe('each importer on its fixture folder gives its golden events', () => {
  it.each(IMPORTER_IDS.map((id) => [id]))('%s', async (id) => {
    const importer = await loadImporter(id);
    // Its main fixture folder: the first its descriptor declares (Importer.samples).
    const folder = join(ROOT_DIR, importer.samples.fixtures[0] ?? `test/importers/fixtures-${id}`);
    const samples = join(GOLDEN_DIR, id);
    const inFolder = join(folder, 'events.golden.jsonl');
    const golden = existsSync(inFolder) ? inFolder : join(samples, 'fixtures.golden.jsonl');
    const hasSamples = existsSync(samples) && readdirSync(samples).length > 0;
    expect(existsSync(golden) || hasSamples, `${id} has no golden: neither ${inFolder} nor goldens in ${samples}`).toBe(true);
    if (!existsSync(golden) || CLINE_FAMILY.has(id)) return;
    expectFolderGolden(importer, folder, golden);
  });
});
