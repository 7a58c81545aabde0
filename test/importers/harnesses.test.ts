// Each importer declares the harness values its events name (Importer.harnesses): every event
// of its fixtures and of the corpus's real logs names one of them, and each declared value has
// its usage convention (the accounting reads the figures by it).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { USAGE_CONVENTIONS } from '../../src/accounting/conventions.ts';
import { loadImporter } from '../../src/importers/registry.ts';
import { IMPORTER_IDS } from '../../src/importers/types.ts';
import { sampleFiles } from '../helpers/importer-samples.ts';

describe('importers name only the harnesses they declare', () => {
  it.each(IMPORTER_IDS.map((id) => [id]))('%s', async (id) => {
    const importer = await loadImporter(id);
    expect(importer.harnesses.length).toBeGreaterThan(0);
    for (const h of importer.harnesses) expect(USAGE_CONVENTIONS[h], h).toBeDefined();
    const files = sampleFiles(importer, 'the harness check of the corpus samples (test/importers/harnesses.test.ts)');
    if (files === null) return;
    const named = new Set<string>();
    for (const file of files) {
      for (const e of importer.parseFile(file, readFileSync(file)).events) named.add((JSON.parse(e.envelope.text) as { harness: string }).harness);
    }
    expect(named.size, `no sample events for ${id}`).toBeGreaterThan(0);
    for (const h of named) expect(importer.harnesses, `${id} named ${h}`).toContain(h);
  });
});

describe('importers declare their sample folders', () => {
  const ROOT = new URL('../../', import.meta.url).pathname;
  it('every fixture folder an importer declares exists, and every test/importers/fixtures-* folder is declared by one importer', async () => {
    const declared = new Map<string, string>();
    for (const id of IMPORTER_IDS) {
      const importer = await loadImporter(id);
      expect(importer.samples.fixtures.length + importer.samples.corpus.length, `${id} declares no sample`).toBeGreaterThan(0);
      for (const dir of importer.samples.fixtures) {
        expect(existsSync(join(ROOT, dir)) && statSync(join(ROOT, dir)).isDirectory(), `${id}: ${dir}`).toBe(true);
        expect(declared.get(dir), `${dir} declared by ${declared.get(dir)} and ${id}`).toBeUndefined();
        declared.set(dir, id);
      }
    }
    const folders = readdirSync(join(ROOT, 'test/importers')).filter((d) => d.startsWith('fixtures-')).map((d) => `test/importers/${d}`);
    expect(folders.length).toBeGreaterThan(10);
    for (const dir of folders) expect(declared.has(dir), `${dir} is no importer's sample folder`).toBe(true);
  });
});
