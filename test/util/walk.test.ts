// The one directory walker (issue 15): code-unit order whatever the locale, links followed once,
// loops and dangling links harmless; replay and the importers list files through it.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listTranscriptFiles } from '../../src/importers/claude-code/paths.ts';
import { listRolloutFiles } from '../../src/importers/codex/paths.ts';
import { listFilesUnder } from '../../src/importers/files.ts';
import { listInputFiles } from '../../src/source/file.ts';
import { byCodeUnits, walkFiles } from '../../src/util/walk.ts';

const root = mkdtempSync(join(tmpdir(), 'toolcanon-walk-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// a/ B.jsonl a.jsonl _u.jsonl é.jsonl z.txt  sub/ x.jsonl  loop -> a  (a link back up)
// linked -> ../elsewhere (a directory outside the tree)   dangling -> nowhere
const a = join(root, 'a');
mkdirSync(join(a, 'sub'), { recursive: true });
for (const n of ['B.jsonl', 'a.jsonl', '_u.jsonl', 'é.jsonl', 'z.txt']) writeFileSync(join(a, n), '{}\n');
writeFileSync(join(a, 'sub', 'x.jsonl'), '{}\n');
const elsewhere = join(root, 'elsewhere');
mkdirSync(elsewhere);
writeFileSync(join(elsewhere, 'far.jsonl'), '{}\n');
symlinkSync(a, join(a, 'sub', 'loop'));
symlinkSync(elsewhere, join(a, 'linked'));
symlinkSync(join(root, 'nowhere'), join(a, 'dangling.jsonl'));

describe('walkFiles', () => {
  const jsonl = (_: string, name: string): boolean => name.endsWith('.jsonl');

  it('orders each directory by code units (upper case and _ before lower case, é last), not by the locale', () => {
    const names = ['a.jsonl', 'B.jsonl', 'é.jsonl', '_u.jsonl'];
    expect([...names].sort(byCodeUnits)).toEqual(['B.jsonl', '_u.jsonl', 'a.jsonl', 'é.jsonl']);
    // localeCompare would put a before B and _ first: the order must not depend on it.
    expect([...names].sort((x, y) => x.localeCompare(y, 'en'))).not.toEqual(['B.jsonl', '_u.jsonl', 'a.jsonl', 'é.jsonl']);
  });

  it('walks depth first, follows a linked directory, walks a loop once, passes over a dangling link', () => {
    expect(walkFiles(a, jsonl).map((f) => f.slice(root.length + 1))).toEqual([
      'a/B.jsonl',
      'a/_u.jsonl',
      'a/a.jsonl',
      'a/linked/far.jsonl',
      'a/sub/x.jsonl',
      'a/é.jsonl',
    ]);
  });

  it('replay and every importer listing see the same files', () => {
    const viaWalker = walkFiles(a, jsonl);
    expect(listInputFiles([a]).map((f) => f.path)).toEqual(viaWalker);
    const sorted = [...viaWalker].sort(byCodeUnits);
    expect(listFilesUnder([a], jsonl)).toEqual(sorted);
    expect(listTranscriptFiles([a])).toEqual(sorted);
    expect(listRolloutFiles([a])).toEqual(sorted);
  });
});
