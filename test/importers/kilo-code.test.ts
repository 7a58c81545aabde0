// The Kilo Code importer (the VS Code extension 4.x/5.x, a Roo Code fork): its globalStorage
// folder, XML tool use, an OpenAI-protocol record whose tokensIn holds the cache, an answer to a
// follow-up question starting a turn, and the shared checks of the Cline format (cline-family.ts)
// over fixtures-kilo-code/.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { kiloCodeImporter } from '../../src/importers/kilo-code/index.ts';
import { defaultKiloPaths } from '../../src/importers/kilo-code/paths.ts';
import { describeFamily } from './cline-family.ts';

const FIXTURES = new URL('./fixtures-kilo-code/', import.meta.url).pathname.replace(/\/$/, '');
const K = '4f1c2b7a-8e3d-4a6b-9c5d-1e2f3a4b5c6d';
type Obj = Record<string, unknown>;

describe('kilo-code', () => {
  it('reads the globalStorage of kilocode.kilo-code', () => {
    expect(defaultKiloPaths({ APPDATA: 'C:/R' }, 'C:/u', 'win32', () => false)).toEqual(['C:/R/Code/User/globalStorage/kilocode.kilo-code']);
  });
  it('gives the usage after an answer the answer\'s turn, in both files', () => {
    const [history, ui] = kiloCodeImporter.listFiles([FIXTURES]);
    const turns = (f: string | undefined): unknown[] => kiloCodeImporter.parseFile(f ?? '', readFileSync(f ?? '')).events.map((e) => (JSON.parse(e.envelope.text) as Obj)['turn_id']);
    expect(turns(history)).toEqual([`${K}#1`, `${K}#1`]);
    expect(turns(ui)).toEqual([`${K}#1`, `${K}#1`]);
  });
});

describe('kilo-code fixtures', () => {
  // python3 fixtures-cline-family/figures.py fixtures-kilo-code kilo
  describeFamily({
    importer: kiloCodeImporter,
    harness: 'kilo_code',
    fixtures: FIXTURES,
    usage: { [K]: [2, 2089, 362, 34_884, 420] },
    calls: { [K]: { ask_followup_question: 1, search_files: 1 } },
    task: K,
    research: '/work/research-33/kilo',
  });
});
