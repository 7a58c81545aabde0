// The Roo Code importer: its globalStorage folder, tokensIn read as the total input (Roo Code
// since 2025-10-31) or as the uncached input (earlier Anthropic-protocol records), a subtask kept
// as an agent of its root task, native MCP names, and the shared checks of the Cline format
// (cline-family.ts) over fixtures-roo-code/.
import { describe, expect, it } from 'vitest';
import { rooCodeImporter } from '../../src/importers/roo-code/index.ts';
import { parseRooFile } from '../../src/importers/roo-code/parser.ts';
import { defaultRooPaths } from '../../src/importers/roo-code/paths.ts';
import { rootTaskOf } from '../../src/importers/roo-code/types.ts';
import { describeFamily } from './cline-family.ts';

const FIXTURES = new URL('./fixtures-roo-code/', import.meta.url).pathname.replace(/\/$/, '');
const P = '0199c8a1-5d2e-7b4a-9c1f-2e3d4c5b6a70';
const C = '0199c8a3-1f0e-7d2c-8b3a-4f5e6d7c8b90';
type Obj = Record<string, unknown>;

const ui = (...texts: Obj[]): Buffer => Buffer.from(JSON.stringify(texts.map((t, i) => ({ ts: 1761000000000 + i, type: 'say', say: 'api_req_started', text: JSON.stringify(t) }))));

describe('roo-code paths and subtasks', () => {
  it('reads the globalStorage of rooveterinaryinc.roo-cline', () => {
    expect(defaultRooPaths({}, '/home/u', 'linux', () => false)).toEqual(['/home/u/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline']);
    expect(defaultRooPaths({}, '/Users/u', 'darwin', (p) => p.includes('VSCodium'))).toEqual(['/Users/u/Library/Application Support/VSCodium/User/globalStorage/rooveterinaryinc.roo-cline']);
  });
  it('takes the root task from history_item.json (rootTaskId, else parentTaskId)', () => {
    expect(rootTaskOf(JSON.stringify({ id: C, rootTaskId: P, parentTaskId: 'x' }))).toBe(P);
    expect(rootTaskOf(JSON.stringify({ id: C, parentTaskId: P }))).toBe(P);
    expect(rootTaskOf(JSON.stringify({ id: P }))).toBeUndefined();
    expect(rootTaskOf('{')).toBeUndefined();
    expect(rootTaskOf(undefined)).toBeUndefined();
  });
});

describe('roo-code usage', () => {
  it('takes the cache out of a total tokensIn (OpenAI protocol, or at least the cache), keeps an older uncached one', () => {
    const p = parseRooFile(`/g/tasks/${P}/ui_messages.json`, ui(
      { apiProtocol: 'anthropic', tokensIn: 14250, tokensOut: 1, cacheWrites: 14236, cacheReads: 0 },
      { apiProtocol: 'anthropic', tokensIn: 9, tokensOut: 1, cacheWrites: 420, cacheReads: 9800 },
      { apiProtocol: 'openai', tokensIn: 100, tokensOut: 1, cacheWrites: 0, cacheReads: 80 },
      { tokensIn: 300, tokensOut: 1 },
    ));
    expect(p.events.map((e) => (JSON.parse(e.envelope.text) as Obj)['input_tokens'])).toEqual([14, 9, 20, 300]);
    expect(p.skipped).toEqual({ input_total_split: 2 });
  });
});

describe('roo-code fixtures', () => {
  // python3 fixtures-cline-family/figures.py fixtures-roo-code roo (the subtask's rows go to its root task's session)
  describeFamily({
    importer: rooCodeImporter,
    harness: 'roo_code',
    fixtures: FIXTURES,
    usage: { [P]: [5, 76, 1387, 38_330, 25_414] },
    calls: { [P]: { apply_diff: 1, attempt_completion: 1, 'context7__get-library-docs': 1, new_task: 1, read_file: 1, write_to_file: 1 } },
    task: C,
    research: '/work/research-33/roo',
  });
});
