// A Claude Code transcript read while it is written (`watch`: ImportOptions.holdTail), in runs cut
// anywhere, gives every table exactly as one read of the finished file gives it, token_usage's
// running context included (context after each event, drift, the row counter session_seq),
// plain rows included: each run keeps back the events at the file's end that the next lines
// may still change (a call waiting for its result, a response still streamed), so no event is
// applied to the accounting before one it follows, and no usage is applied twice.
// And the other way: without holding back, the same cuts give other running figures (the test
// can fail). On the memory store (the pipeline's port, held equal to the engine by
// test/sink/memory.test.ts); test/watch/watch.test.ts does the same through the real engine.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/decode/event.ts';
import { readImport, type ImportStateStore } from '../../src/pipeline/import.ts';
import { claudeCodeImporter } from '../../src/importers/claude-code/index.ts';
import { BatchWriter, emptyCounts, writerTarget } from '../../src/pipeline/batch-writer.ts';
import type { ImportFileState } from '../../src/model/sink.ts';
import { MemorySink } from '../../src/sink/memory.ts';
import { TABLES } from '../../src/tables/index.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { makeTempDir } from '../helpers/db.ts';

const CORPUS = corpusOrSkip('claude-code/projects/spotter', 'test/importers/live-accounting.test.ts');
const WHEN = ['ingested_at', 'computed_at'];

function memoryState(): ImportStateStore {
  const files = new Map<string, ImportFileState>();
  return {
    load: async () => new Map(files),
    save: async (_importer, saved) => {
      for (const [p, f] of saved) files.set(p, f);
    },
  };
}

/** One read of the file into the store: live (holding back what may change), or to its end. */
async function read(sink: MemorySink, state: ImportStateStore, path: string, mode: 'live' | 'release' | 'plain'): Promise<void> {
  const writer = new BatchWriter(sink, emptyCounts());
  const ingestedAt = '2026-12-07 00:00:00.000';
  const target = writerTarget(writer, ingestedAt, { ...DEFAULT_LIMITS, redact: true });
  await readImport(claudeCodeImporter, [path], state, target, { ingestedAt, ...(mode === 'plain' ? {} : { holdTail: true }), ...(mode === 'release' ? { release: new Set([path]) } : {}) });
}

/** Every table as FINAL reads it, sorted, without the times of ingestion; the file's folder left out of `source` and `origin`. */
function tables(sink: MemorySink, dir: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const t of TABLES) {
    out[t.name] = sink
      .final(t.name)
      .map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).filter(([k]) => !WHEN.includes(k)).sort(([a], [b]) => a.localeCompare(b))), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : typeof v === 'string' ? v.split(dir).join('') : v)))
      .sort();
  }
  return out;
}

/** The rows of one side missing from the other (short), for a readable failure. */
function difference(got: readonly string[], want: readonly string[]): { missing: string[]; extra: string[] } {
  const g = new Set(got);
  const w = new Set(want);
  const short = (r: string): string => r.replace(/"raw_input":"(?:[^"\\]|\\.)*"/, '"raw_input":…').slice(0, 400);
  return { missing: want.filter((r) => !g.has(r)).slice(0, 3).map(short), extra: got.filter((r) => !w.has(r)).slice(0, 3).map(short) };
}

/** Cut points of interest in `bytes`: after a tool_use line (its result not yet written), between two lines of one response, mid-line. */
function cutsOf(bytes: Buffer): { afterToolUse: number[]; insideResponse: number[]; midLine: number[] } {
  const afterToolUse: number[] = [];
  const insideResponse: number[] = [];
  const midLine: number[] = [];
  let at = 0;
  let lastId = '';
  while (at < bytes.length) {
    const nl = bytes.indexOf(10, at);
    const end = nl < 0 ? bytes.length : nl + 1;
    const text = bytes.subarray(at, end).toString('utf8');
    let record: { type?: string; message?: { id?: string; content?: { type?: string }[] } } = {};
    try {
      record = JSON.parse(text) as typeof record;
    } catch {
      // a line the importer reads as a dead letter: no cut of interest
    }
    const id = record.type === 'assistant' ? (record.message?.id ?? '') : '';
    if (id !== '' && id === lastId) insideResponse.push(at);
    if (record.type === 'assistant' && record.message?.content?.some((b) => b.type === 'tool_use')) afterToolUse.push(end);
    midLine.push(at + Math.floor((end - at) / 2));
    lastId = id;
    at = end;
  }
  return { afterToolUse, insideResponse, midLine };
}

/** A deterministic pick of `n` distinct values (xorshift32 from the seed: the same cuts every run). */
function pick(values: readonly number[], n: number, seed: number): number[] {
  let s = (seed * 2654435761) >>> 0 || 1;
  const out = new Set<number>();
  const want = Math.min(n, new Set(values).size);
  while (out.size < want) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out.add(values[s % values.length] as number);
  }
  return [...out].sort((a, b) => a - b);
}

const tmp = makeTempDir('live-accounting');
afterAll(() => tmp.cleanup());

describe.skipIf(CORPUS === null)('a transcript read while it is written = one read of the finished file', () => {
  const files = ['258c7280-ae70-4798-800f-63464d01a85d.jsonl', 'tool_heavy.jsonl', '4d5611e5-241a-462a-8d15-5122611a9569.jsonl'];

  /** Reads `bytes` written in pieces ending at `cuts`, each piece followed by a live read; the end released (the file still). */
  async function inRuns(name: string, bytes: Buffer, cuts: readonly number[], mode: 'live' | 'plain'): Promise<Record<string, string[]>> {
    const dir = join(tmp.dir, name);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'session.jsonl');
    writeFileSync(path, '');
    const sink = new MemorySink();
    const state = memoryState();
    let at = 0;
    for (const cut of [...cuts, bytes.length]) {
      if (cut <= at) continue;
      appendFileSync(path, bytes.subarray(at, cut));
      at = cut;
      await read(sink, state, path, mode);
    }
    if (mode === 'live') {
      await read(sink, state, path, 'release');
      // No usage is applied twice: token_usage holds one row per event before any merge.
      const ids = sink.rows('token_usage').map((r) => String(r['event_id']));
      const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
      expect(twice.map((id) => sink.rows('token_usage').filter((r) => r['event_id'] === id).map((r) => `${String(r['source'])} ${String(r['output_tokens'])} ${String(r['session_seq'])} ${String(r['origin'])}`))).toEqual([]);
    }
    return tables(sink, dir);
  }

  async function oneShot(name: string, bytes: Buffer): Promise<Record<string, string[]>> {
    const dir = join(tmp.dir, `${name}-one`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'session.jsonl'), bytes);
    const sink = new MemorySink();
    await read(sink, memoryState(), join(dir, 'session.jsonl'), 'plain');
    return tables(sink, dir);
  }

  it.each(files)('%s: cut after tool_use lines, inside streamed responses and mid-line, 16 seeds', async (file) => {
    const bytes = readFileSync(join(CORPUS ?? '', file));
    const want = await oneShot(file, bytes);
    expect(want['token_usage']?.length).toBeGreaterThan(9);
    const { afterToolUse, insideResponse, midLine } = cutsOf(bytes);
    expect(afterToolUse.length).toBeGreaterThan(5);
    if (file !== 'tool_heavy.jsonl') expect(insideResponse.length).toBeGreaterThan(5);
    for (let seed = 1; seed <= 16; seed++) {
      const cuts = [...pick(afterToolUse, 4, seed), ...pick(insideResponse, 3, seed * 7), ...pick(midLine, 3, seed * 13)].sort((a, b) => a - b);
      const got = await inRuns(`${file}-${seed}`, bytes, cuts, 'live');
      for (const t of TABLES) {
        const g = got[t.name] ?? [];
        const w = want[t.name] ?? [];
        expect({ seed, table: t.name, rows: g.length, ...difference(g, w) }).toEqual({ seed, table: t.name, rows: w.length, missing: [], extra: [] });
      }
    }
  }, 300_000);

  it('without holding back, the same cuts give other running figures (a call applied after a usage it precedes, a usage applied twice)', async () => {
    const file = files[0] as string;
    const bytes = readFileSync(join(CORPUS ?? '', file));
    const want = await oneShot(`${file}-control`, bytes);
    const { afterToolUse, insideResponse } = cutsOf(bytes);
    const cuts = [...pick(afterToolUse, 6, 3), ...pick(insideResponse, 6, 5)].sort((a, b) => a - b);
    const got = await inRuns(`${file}-control`, bytes, cuts, 'plain');
    expect(got['tool_calls']).toEqual(want['tool_calls']);
    expect(got['token_usage']).not.toEqual(want['token_usage']);
  }, 300_000);
});
