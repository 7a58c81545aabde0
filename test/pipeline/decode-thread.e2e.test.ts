// The decode thread (src/thread/decode.ts) against decoding in the main thread: the same runs of
// the compiled code (a build of this checkout made here: only compiled code starts the thread)
// give the same counts and the same rows in every table, byte for byte, for a replay of every
// shipped fixture (the bad ones included) in many small batches and in one, and for imports
// with malformed records; every event is in exactly one place. A thread that fails fails the run.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PipelineCounts } from '../../src/pipeline/batch-writer.ts';
import { listInputFiles } from '../../src/source/file.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const FIXTURES = join(ROOT, 'fixtures');
const DUMP = join(ROOT, 'test/helpers/pipeline-dump.mjs');

interface Dump {
  readonly threads: number;
  readonly counts: PipelineCounts;
  readonly tables: Record<string, string[]>;
}

let build: string;
let tmp: string;

beforeAll(() => {
  // Under the checkout (its node_modules resolve), one level down as dist/ is (paths relative to the code hold).
  build = join(ROOT, '.cache', `decode-thread-${process.pid}`);
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', build], { stdio: 'pipe' });
  tmp = mkdtempSync(join(tmpdir(), 'toolcanon-decode-thread-'));
}, 180_000);

afterAll(() => {
  rmSync(build, { recursive: true, force: true });
  rmSync(tmp, { recursive: true, force: true });
});

let runs = 0;
/** One run in a child process (one engine each), with the decode thread or without. */
function run(thread: boolean, args: readonly string[]): Dump {
  const db = join(tmp, `db-${++runs}`);
  const r = spawnSync(process.execPath, [DUMP, build, db, ...args], {
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
    env: { ...process.env, TOOLCANON_DECODE_THREAD: thread ? '1' : '0' },
  });
  if (r.status !== 0) throw new Error(`pipeline-dump ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as Dump;
}

/** Both ways; the same counts and tables, the thread used by the one and not the other. */
function bothWays(args: readonly string[]): Dump {
  const threaded = run(true, args);
  const inMain = run(false, args);
  expect(threaded.threads).toBeGreaterThan(0);
  expect(inMain.threads).toBe(0);
  expect(threaded.counts).toEqual(inMain.counts);
  expect(Object.keys(threaded.tables)).toEqual(Object.keys(inMain.tables));
  for (const [name, rows] of Object.entries(inMain.tables)) {
    expect(threaded.tables[name]?.length, name).toBe(rows.length);
    expect(threaded.tables[name], name).toEqual(rows);
  }
  const c = threaded.counts;
  expect(c.eventsRead).toBe(c.rowsWritten + c.deadLetters);
  return threaded;
}

function fixtureLineCount(): number {
  let n = 0;
  for (const f of listInputFiles([FIXTURES])) for (const line of readFileSync(f.path, 'latin1').split('\n')) if (line.trim() !== '') n++;
  return n;
}

describe('decoding in a worker thread', () => {
  it('replays every fixture as the main thread does, in batches of 50 events', () => {
    const d = bothWays(['replay', '50', FIXTURES]);
    expect(d.counts.eventsRead).toBe(fixtureLineCount());
    expect(d.counts.deadLetters).toBeGreaterThan(0);
    expect(d.tables['tool_calls']?.length).toBeGreaterThan(300);
    expect(d.tables['token_usage']?.length).toBeGreaterThan(0);
    expect(d.tables['mcp_events']?.length).toBeGreaterThan(0);
  }, 300_000);

  it('replays every fixture as the main thread does, in one batch', () => {
    const d = bothWays(['replay', '20000', FIXTURES]);
    expect(d.counts.eventsRead).toBe(fixtureLineCount());
  }, 300_000);

  it('imports a transcript with malformed records as the main thread does (dead letters in place)', () => {
    const dir = mkdtempSync(join(tmp, 'claude-'));
    const file = join(dir, 'session.jsonl');
    copyFileSync(join(ROOT, 'test/importers/fixtures-claude-code/tool-search.jsonl'), file);
    appendFileSync(file, '{"type": "assistant", "message": \n[1, 2\n');
    const d = bothWays(['import', '3', 'claude-code', dir]);
    expect(d.counts.deadLetters).toBeGreaterThan(0);
    expect(d.tables['dead_letters']?.some((r) => r.includes('import_malformed'))).toBe(true);
  }, 300_000);

  const codex = corpusOrSkip('codex/sessions', 'decode thread on the Codex corpus');
  it.skipIf(codex === null)('imports the Codex corpus as the main thread does', () => {
    const d = bothWays(['import', '500', 'codex', codex as string]);
    expect(d.counts.eventsRead).toBeGreaterThan(1000);
  }, 300_000);

  it('fails every wait with the reason when the thread fails, and refuses more lines', async () => {
    const { DecodeThread } = (await import(join(build, 'thread/decode.js'))) as typeof import('../../src/thread/decode.ts');
    const { DEFAULT_LIMITS } = (await import(join(build, 'decode/event.js'))) as typeof import('../../src/decode/event.ts');
    // A column the block encoder refuses: the worker throws on its first message.
    const columns = [{ name: 'not a column', wire: 'String' as const, nullable: false }];
    const received: unknown[] = [];
    const thread = new DecodeThread({ ingestedAt: '2026-12-05 00:00:00.000', limits: DEFAULT_LIMITS, columns }, (o) => received.push(o));
    thread.post(Buffer.from('{"type":"tool_call"}'), 'x.jsonl:1');
    await expect(thread.settled(0)).rejects.toThrow(/decode thread failed: not a column name/);
    expect(() => thread.post(Buffer.from('{}'), 'x.jsonl:2')).toThrow(/decode thread failed/);
    expect(received).toEqual([]);
    await thread.close();
  }, 60_000);
});
