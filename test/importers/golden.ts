// Golden outputs of importers on real samples and fixtures: what the importer produced on a
// file, committed as JSON lines (one event or malformed record a line, then the file's counters),
// reviewed when written and rewritten only with UPDATE_GOLDEN=1. A change of any event's bytes,
// order, source or offset, of a malformed record or of a counter fails the comparison.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { expect } from 'vitest';
import type { Importer, ParsedFile } from '../../src/importers/types.ts';

export const GOLDEN_DIR = new URL('./golden/', import.meta.url).pathname;
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

/**
 * A parse as golden lines: paths under `base` made relative to it (in sources and wherever an
 * event repeats them), events as parsed JSON with their end offsets, malformed records with
 * their problem, detail and bytes, and last the counters.
 */
export function goldenLines(parsed: ParsedFile, path: string, base: string): string[] {
  const rel = (text: string): string => text.split(`${base}/`).join('');
  const out: string[] = [];
  for (const e of parsed.events) out.push(rel(JSON.stringify({ source: e.source, end: e.endOffset, event: JSON.parse(e.envelope.text) as unknown })));
  for (const m of [...(parsed.malformed ?? [])].sort((a, b) => a.line - b.line)) {
    const raw = typeof m.raw === 'string' ? m.raw : `bytes:${Buffer.from(m.raw).toString('hex')}`;
    out.push(rel(JSON.stringify({ malformed: `${path}:${m.line}`, problem: m.problem, detail: m.detail, raw })));
  }
  const skipped = Object.fromEntries(Object.entries(parsed.skipped).sort(([a], [b]) => (a < b ? -1 : 1)));
  out.push(JSON.stringify({ records: parsed.recordsRead, complete_bytes: parsed.completeBytes, skipped }));
  return out;
}

/** The lines equal golden/<name>.golden.jsonl (UPDATE_GOLDEN=1 writes it; a missing file fails otherwise). */
export function expectGolden(name: string, lines: readonly string[]): void {
  const file = join(GOLDEN_DIR, `${name}.golden.jsonl`);
  if (UPDATE) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${lines.join('\n')}\n`);
  }
  if (!existsSync(file)) expect.fail(`${relative(process.cwd(), file)} is missing: run UPDATE_GOLDEN=1 npx vitest run <this test file> and review it`);
  expect(lines).toEqual(readFileSync(file, 'utf8').split('\n').filter((l) => l !== ''));
}

/**
 * A fixture folder's events and malformed records, file by file as the importer lists them,
 * equal `golden` (a per-importer test's fixtures-<id>/events.golden.jsonl: sources relative to
 * the folder; UPDATE_GOLDEN=1 rewrites it).
 */
export function expectFolderGolden(importer: Importer, folder: string, golden: string): void {
  const lines: string[] = [];
  for (const f of importer.listFiles([folder])) {
    const parsed = importer.parseFile(f, readFileSync(f));
    for (const e of parsed.events) lines.push(JSON.stringify({ source: relative(folder, e.source), event: JSON.parse(e.envelope.text) as unknown }));
    for (const m of parsed.malformed ?? []) lines.push(JSON.stringify({ source: `${relative(folder, f)}:${m.line}`, malformed: m.problem }));
  }
  if (UPDATE) writeFileSync(golden, lines.join('\n') + '\n');
  expect(lines).toEqual(readFileSync(golden, 'utf8').split('\n').filter((l) => l !== ''));
}
