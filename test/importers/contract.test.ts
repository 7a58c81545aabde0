// One contract test over every registered importer (IMPORTER_IDS): generated files that mix real
// records, junk lines and damaged records must parse without throwing; junk must come back as
// malformed records with its line and bytes; nothing else may change because of it; parsing is
// deterministic; and one junk line imported for real is exactly one `import_malformed` dead letter.
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEvent } from '../../src/decode/event.ts';
import { readObject } from '../../src/importers/lines.ts';
import { loadImporter } from '../../src/importers/registry.ts';
import { runImport } from '../../src/pipeline/import.ts';
import { IMPORTER_IDS, type Importer, type ImporterId, type ParsedFile } from '../../src/importers/types.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { makeTempDir, openTempSink } from '../helpers/db.ts';
import { pathsOf, type JsonPath } from '../helpers/json-paths.ts';
import { documentText, elementsOf, isDocument, type DocumentShape } from './documents.ts';

const FIXTURES = new URL('./', import.meta.url).pathname;
const ROOT_DIR = new URL('../../', import.meta.url).pathname;
const PROPERTY = { seed: 14, numRuns: 200 } as const;
/** Pool lines longer than this are left out: the property runs parse each file four times. */
const MAX_POOL_LINE_CHARS = 8000;

// ---------------------------------------------------------------------------------------------
// What each importer is fed: real records of its format, and a real file that imports cleanly.

interface ContractCase {
  /** Real, valid-looking lines of the importer's format; null when the corpus is absent (skip). */
  readonly pool: string[] | null;
  /** A real file whose lines import without a malformed record; null when the corpus is absent. */
  readonly cleanFile: string | null;
  /** The name generated files get: the extension and name matter to some importers. */
  readonly fileName: string;
  /** Whether one record (a line) is one malformed record at most: OTLP lines hold many spans. */
  readonly oneRecordPerLine: boolean;
  /**
   * Skip counters that count one record each (at most once per line, never beside a malformed
   * record or an event of the same record): with the malformed records and the events they are
   * at most the records read, so no record is counted twice. Undefined: every counter does.
   */
  readonly perRecordCounter?: (key: string) => boolean;
  /** Whether events count in that bound too (not when one line yields several tool calls). */
  readonly eventsInBound: boolean;
}

function linesOf(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && l.length <= MAX_POOL_LINE_CHARS);
}

function jsonlFilesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .sort()
    .map((n) => join(dir, n));
}

/** Claude Code counts record types skipped on purpose under their own name or `unknown_type:`. */
const CLAUDE_TYPE_COUNTERS = new Set(['progress', 'system', 'file-history-snapshot', 'queue-operation', 'summary', 'attachment', 'permission-mode', 'custom-title', 'ai-title', 'last-prompt', 'pr-link', 'worktree-state']);

function contractCase(id: ImporterId): ContractCase {
  const suite = `the ${id} importer contract test`;
  switch (id) {
    case 'claude-code': {
      const own = join(FIXTURES, 'fixtures-claude-code', 'tool-search.jsonl');
      const corpus = corpusOrSkip('claude-code/projects/spotter/short.jsonl', suite);
      return {
        pool: [...linesOf(own), ...(corpus ? linesOf(corpus) : [])],
        cleanFile: own,
        fileName: 'contract-session.jsonl',
        oneRecordPerLine: true,
        // A line can hold several tool_use blocks (several events, duplicates counted per
        // block), and its usage can be malformed while its calls are read: only the per-type
        // counters of lines that are nothing else are bounded.
        perRecordCounter: (key) => CLAUDE_TYPE_COUNTERS.has(key) || key.startsWith('unknown_type:'),
        eventsInBound: false,
      };
    }
    case 'codex': {
      const samples = corpusOrSkip('samples/codex', suite);
      const legacy = corpusOrSkip('codex/sessions/2025/08/14/rollout-2025-08-14T18-42-29-8b3d642f-5974-47c8-b9d4-09efcc975a02.jsonl', suite);
      return {
        pool: samples && legacy ? [...jsonlFilesIn(samples).flatMap(linesOf), ...linesOf(legacy).slice(0, 20)] : null,
        cleanFile: samples ? join(samples, 'jazzyalex-agent-sessions__stage0_codex_small__L1-25_excerpt.jsonl') : null,
        fileName: 'rollout-2025-10-10T01-09-47-0199cee2-0000-7000-8000-00000000c0de.jsonl',
        oneRecordPerLine: true,
        // A truncated output is counted beside the event it belongs to.
        perRecordCounter: (key) => key !== 'output_truncated',
        eventsInBound: true,
      };
    }
    case 'opencode': {
      const samples = corpusOrSkip('samples/opencode', suite);
      return {
        pool: samples ? jsonlFilesIn(samples).flatMap(linesOf) : null,
        cleanFile: samples ? join(samples, 'rickywo-Formic__docs_OPENCODE_INTEGRATION_PLAN_run_format_json.jsonl') : null,
        fileName: 'capture.jsonl',
        oneRecordPerLine: true,
        eventsInBound: true,
      };
    }
    case 'otlp': {
      const genai = corpusOrSkip('samples/otel_genai', suite);
      const claude = corpusOrSkip('samples/claude_code_otel', suite);
      const genaiLines = genai ? jsonlFilesIn(genai).flatMap(linesOf) : [];
      // The GenAI samples' service names no harness (their spans are skipped whole): the same
      // lines as a Codex service sends them reach the span checks too.
      const asCodex = genaiLines.map((l) => l.replaceAll('"agef-demo-agent"', '"codex_exec"'));
      return {
        pool: genai && claude ? [...genaiLines, ...asCodex, ...jsonlFilesIn(claude).flatMap(linesOf)] : null,
        cleanFile: claude ? join(claude, 'exequieldeferrari-axiom__claude_logs.compact.jsonl') : null,
        fileName: 'export.jsonl',
        oneRecordPerLine: false,
        eventsInBound: true,
      };
    }
    case 'acp': {
      const files = jsonlFilesIn(join(FIXTURES, 'fixtures-acp'));
      return {
        pool: files.flatMap(linesOf),
        cleanFile: join(FIXTURES, 'fixtures-acp', 'grok-build-session.capture.jsonl'),
        fileName: 'capture.jsonl',
        oneRecordPerLine: true,
        eventsInBound: true,
      };
    }
    case 'gemini-cli': {
      const own = join(FIXTURES, 'fixtures-gemini-cli', 'tmp', 'a3f1c9e07b52d4186e0f9c2b7d31a5e8f4c6b0d29e7a1f3c5b8d0e2a4c6f8b1d', 'chats');
      const main = join(own, 'session-2026-04-29T21-39-7c1e4a2b.jsonl');
      const samples = corpusOrSkip('samples/gemini_cli', suite);
      return {
        pool: [...linesOf(main), ...linesOf(join(own, '7c1e4a2b-9d3f-4e8a-b5c6-0f1d2e3a4b5c', 'e2b7d0c4-1a9f-4c3e-8b6d-5f0a1e2c3d4b.jsonl')), ...(samples ? jsonlFilesIn(samples).flatMap(linesOf) : [])],
        cleanFile: main,
        fileName: 'session-2026-04-29T21-39-7c1e4a2b.jsonl',
        oneRecordPerLine: true,
        // A message line yields a usage and several calls, and a message written again carries
        // the same ones: only the per-line counters are bounded (gemini_without_tokens is per
        // message, output_truncated beside its event).
        perRecordCounter: (key) => key !== 'gemini_without_tokens' && key !== 'output_truncated',
        eventsInBound: false,
      };
    }
    case 'qwen-code': {
      const chats = join(FIXTURES, 'fixtures-qwen-code', 'projects', '-home-mei-src-ledger', 'chats');
      const main = join(chats, '5b0c1e8a-3f4d-4c2a-9e71-8d2f6a4b3c10.jsonl');
      return {
        pool: [...linesOf(main), ...linesOf(join(chats, 'c2a9e4d1-7b36-4f05-a8e2-6d1f0b9c5e47.jsonl'))],
        cleanFile: main,
        fileName: '5b0c1e8a-3f4d-4c2a-9e71-8d2f6a4b3c10.jsonl',
        oneRecordPerLine: true,
        // An assistant line holds a usage and several calls (handed out pending at the end):
        // only the counters of lines that yield nothing else are bounded.
        perRecordCounter: (key) => key.startsWith('system') || key.startsWith('unknown_type:') || ['forked_copy', 'assistant_without_usage_or_calls', 'tool_result_without_call', 'repeated_tool_result'].includes(key),
        eventsInBound: false,
      };
    }
    case 'copilot-cli': {
      const state = join(FIXTURES, 'fixtures-copilot-cli', 'session-state');
      const main = join(state, '3f6b2c1d-8e4a-4b7f-9c2d-1a0e5f6b7c8d', 'events.jsonl');
      return {
        pool: [...linesOf(main), ...linesOf(join(state, '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', 'events.jsonl'))],
        cleanFile: main,
        fileName: 'events.jsonl',
        oneRecordPerLine: true,
        // A shutdown line yields one usage per model: events are not bounded by lines. Every
        // counter is one line that yields nothing else but a truncated output's.
        perRecordCounter: (key) => key !== 'output_truncated',
        eventsInBound: false,
      };
    }
    case 'pi-agent': {
      const dir = join(FIXTURES, 'fixtures-pi-agent', 'sessions', '--home-ada-src-orbit--');
      const main = join(dir, '2026-11-02T08-00-00-000Z_8f14e45f-ceea-467e-9a3b-2c1d5e6f7a80.jsonl');
      return {
        pool: [...linesOf(main), ...linesOf(join(dir, '2026-11-02T09-00-00-000Z_c9f0f895-fb98-4b91-8e4d-7a6b5c4d3e21.jsonl'))],
        cleanFile: main,
        fileName: '2026-11-02T08-00-00-000Z_8f14e45f-ceea-467e-9a3b-2c1d5e6f7a80.jsonl',
        oneRecordPerLine: true,
        // An assistant line holds a usage and several calls (handed out pending at the end):
        // only the counters of lines that yield nothing else are bounded.
        perRecordCounter: (key) => key !== 'output_truncated' && key !== 'repeated_call',
        eventsInBound: false,
      };
    }
    case 'openclaw': {
      const dir = join(FIXTURES, 'fixtures-openclaw', 'agents');
      const main = join(dir, 'main', 'sessions', '3b9e2c71-5d4a-4f86-9c10-7e2a1b4c8d55.jsonl');
      return {
        pool: [...linesOf(main), ...linesOf(join(dir, 'coder', 'sessions', 'e7c2a9d4-1b58-4f03-b6e1-9d4a2c7f8e31.jsonl'))],
        cleanFile: main,
        fileName: '3b9e2c71-5d4a-4f86-9c10-7e2a1b4c8d55.jsonl',
        oneRecordPerLine: true,
        // pi's parser: as pi-agent.
        perRecordCounter: (key) => key !== 'output_truncated' && key !== 'repeated_call',
        eventsInBound: false,
      };
    }
    default:
      return derivedCase(id);
  }
}

// ---------------------------------------------------------------------------------------------
// A case derived from the registry: an importer without a case of its own is fed the files its
// own listFiles finds in `test/importers/fixtures-<id>/` (every importer registered after the
// line-format ones above has that folder, and its test fails without it).

/** What a whole-document importer is fed: the elements of its fixture documents, by file name. */
interface DocumentCase {
  /** Per file name (the name picks the reader): the fixture documents' top-level elements as JSON text. */
  readonly pools: ReadonlyMap<string, readonly string[]>;
  /** Per file name: how its document holds the elements (an array, or a thread's messages). */
  readonly shapes: ReadonlyMap<string, DocumentShape>;
  /** A fixture document that imports without a malformed record. */
  readonly cleanFile: string;
}

const FIXTURE_FILES = new Map<ImporterId, string[]>();
for (const id of IMPORTER_IDS) {
  // Its main fixture folder: the first its descriptor declares (Importer.samples).
  const importer = await loadImporter(id);
  const first = importer.samples.fixtures[0];
  if (first !== undefined) FIXTURE_FILES.set(id, importer.listFiles([join(ROOT_DIR, first)]));
}
const DOCUMENT_IDS = new Set<ImporterId>();
/** Whole-document importers of a binary format (a SQLite database: Goose): checked by the binary suite below. */
const BINARY_IDS = new Set<ImporterId>();
/** Line importers of a text format whose lines are no JSON (Aider's Markdown): checked by the text suite below. */
const TEXT_IDS = new Set<ImporterId>();
for (const [id, files] of FIXTURE_FILES) {
  const importer = await loadImporter(id);
  if (files.length > 0 && files.every((f) => importer.readingOf(f).kind === 'document')) (files.every((f) => isBinaryDocument(f)) ? BINARY_IDS : DOCUMENT_IDS).add(id);
  else if (files.length > 0 && files.every((f) => importer.readingOf(f).kind === 'lines' && !isJsonLines(f))) TEXT_IDS.add(id);
}

/** True for a file whose first non-blank line is a JSON object (a JSONL format). */
function isJsonLines(path: string): boolean {
  const first = readFileSync(path, 'utf8').split('\n').find((l) => l.trim() !== '') ?? '';
  return readObject(first.replace(/^\uFEFF/, '')).ok;
}

/** True for a document that is no JSON text (it starts with neither `[` nor `{`). */
function isBinaryDocument(path: string): boolean {
  const head = readFileSync(path).subarray(0, 64).toString('latin1').replace(/^\uFEFF|^\xEF\xBB\xBF/, '').trimStart();
  return !head.startsWith('[') && !head.startsWith('{');
}

function derivedCase(id: ImporterId): ContractCase {
  const files = FIXTURE_FILES.get(id) ?? [];
  if (files.length === 0) throw new Error(`No contract case for ${id}: test/importers/fixtures-${id}/ holds no file its importer lists`);
  return { pool: files.flatMap(linesOf), cleanFile: files[0] ?? null, fileName: basename(files[0] ?? 'x.jsonl'), oneRecordPerLine: true, eventsInBound: false, perRecordCounter: () => false };
}

function documentCase(id: ImporterId): DocumentCase {
  const files = FIXTURE_FILES.get(id) ?? [];
  const pools = new Map<string, string[]>();
  const shapes = new Map<string, DocumentShape>();
  for (const f of files) {
    const { elements, shape } = elementsOf(JSON.parse(readFileSync(f, 'utf8')));
    const pool = pools.get(basename(f)) ?? [];
    pool.push(...elements.map((e) => JSON.stringify(e)).filter((t) => t.length <= MAX_POOL_LINE_CHARS));
    pools.set(basename(f), pool);
    shapes.set(basename(f), shape);
  }
  return { pools, shapes, cleanFile: files[0] ?? '' };
}

// ---------------------------------------------------------------------------------------------
// Generated files.


/** The replacement that removes the member instead (an array element is spliced out). */
const REMOVE = Symbol('remove');

/** A copy of `value` with the member at `path` removed or replaced. */
function damaged(value: unknown, path: JsonPath, replacement: unknown): unknown {
  const copy: unknown = structuredClone(value);
  let parent: unknown = copy;
  for (const step of path.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[step];
  const last = path[path.length - 1];
  if (last === undefined) return copy;
  if (Array.isArray(parent) && typeof last === 'number') {
    if (replacement === REMOVE) parent.splice(last, 1);
    else parent[last] = replacement;
  } else if (typeof parent === 'object' && parent !== null) {
    const o = parent as Record<string | number, unknown>;
    if (replacement === REMOVE) delete o[last];
    else o[last] = replacement;
  }
  return copy;
}

type Entry =
  | { readonly kind: 'record'; readonly text: string }
  | { readonly kind: 'damaged'; readonly text: string }
  | { readonly kind: 'junk'; readonly text: string }
  | { readonly kind: 'blank'; readonly text: string };

/** Text that is no JSON object and survives UTF-8 as a non-blank line of its own. */
function isJunk(text: string): boolean {
  const decoded = Buffer.from(text, 'utf8').toString('utf8');
  return !/[\r\n]/.test(decoded) && decoded.trim() !== '' && !readObject(decoded).ok;
}

const junkArb: fc.Arbitrary<string> = fc
  .oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 60 }),
    // JSON that is no object, and objects cut short.
    fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'),
    fc.constantFrom('{', '{"type":', '[]', 'null', '"{}"', '{"a":1}}', '\u0000', 'NaN'),
  )
  .filter(isJunk);

function entriesArb(pool: readonly string[]): fc.Arbitrary<Entry[]> {
  const record = fc.constantFrom(...pool).map((text): Entry => ({ kind: 'record', text }));
  const broken = fc
    .record({
      text: fc.constantFrom(...pool),
      pick: fc.nat(),
      replacement: fc.constantFrom<unknown>(REMOVE, REMOVE, null, 42, -1, 1.5, '', 'x', true, [], {}, '2026-13-45T99:99:99Z', '1786407295000000000'),
    })
    .map(({ text, pick, replacement }): Entry => {
      const value: unknown = JSON.parse(text);
      const paths = pathsOf(value, 10);
      const path = paths[pick % Math.max(paths.length, 1)];
      return { kind: 'damaged', text: path === undefined ? text : JSON.stringify(damaged(value, path, replacement)) };
    });
  const junk = junkArb.map((text): Entry => ({ kind: 'junk', text }));
  const blank = fc.constantFrom('', '   ', '\t').map((text): Entry => ({ kind: 'blank', text }));
  return fc.array(fc.oneof({ arbitrary: record, weight: 4 }, { arbitrary: broken, weight: 4 }, { arbitrary: junk, weight: 2 }, { arbitrary: blank, weight: 1 }), { minLength: 1, maxLength: 14 });
}

/** A torn last line (a log being written): a valid record cut short, without its newline. */
function tailArb(pool: readonly string[]): fc.Arbitrary<string | null> {
  return fc.option(
    fc
      .record({ text: fc.constantFrom(...pool), at: fc.nat() })
      .map(({ text, at }) => text.slice(0, 1 + (at % Math.max(text.length - 1, 1))))
      .filter((t) => t.trim() !== '' && !readObject(t).ok),
    { nil: null },
  );
}

interface Layout {
  readonly data: Buffer;
  /** Text of each line, 1-based (index 0 unused), as the bytes decode. */
  readonly lineText: readonly string[];
  /** Byte offset just past each complete line, 1-based. */
  readonly lineEnd: readonly number[];
  /** Bytes up to the end of the last complete line. */
  readonly completeBytes: number;
}

function layout(entries: readonly Entry[], tail: string | null): Layout {
  const body = entries.map((e) => e.text).join('\n') + '\n';
  const data = Buffer.from(body + (tail ?? ''), 'utf8');
  const completeBytes = Buffer.byteLength(body, 'utf8');
  const lineText: string[] = [''];
  const lineEnd: number[] = [0];
  let start = 0;
  for (let nl = data.indexOf(0x0a); nl >= 0 && nl < completeBytes; nl = data.indexOf(0x0a, start)) {
    lineText.push(data.toString('utf8', start, nl));
    lineEnd.push(nl + 1);
    start = nl + 1;
  }
  return { data, lineText, lineEnd, completeBytes };
}

/** What must not change between two parses: events, malformed records (bytes aside), counters. */
function comparable(parsed: ParsedFile, dropLines: ReadonlySet<number> = new Set()) {
  return {
    events: parsed.events.map((e) => ({ line: e.envelope.text, source: e.source })),
    malformed: (parsed.malformed ?? []).filter((m) => !dropLines.has(m.line)).map((m) => ({ line: m.line, problem: m.problem, detail: m.detail, raw: m.raw })),
    skipped: parsed.skipped,
  };
}

function sum(counters: Readonly<Record<string, number>>, keep: (key: string) => boolean = () => true): number {
  return Object.entries(counters).reduce((n, [k, v]) => n + (keep(k) ? v : 0), 0);
}

// ---------------------------------------------------------------------------------------------

const importers = new Map<ImporterId, Importer>();
// One embedded ClickHouse for the file (chdb runs one engine per process); each importer's
// end-to-end check reads back only the dead letters of its own file.
let sink: ClickHouseSink;
let closeSink: () => Promise<void>;
const tmp = makeTempDir('contract');

beforeAll(async () => {
  for (const id of IMPORTER_IDS) importers.set(id, await loadImporter(id));
  ({ sink, cleanup: closeSink } = await openTempSink('contract'));
});
afterAll(async () => {
  await closeSink?.();
  tmp.cleanup();
});

describe.each(IMPORTER_IDS.filter((id) => !DOCUMENT_IDS.has(id) && !BINARY_IDS.has(id) && !TEXT_IDS.has(id)).map((id) => [id, contractCase(id)] as const))('importer contract: %s', (id, c) => {
  const importer = (): Importer => {
    const found = importers.get(id);
    if (!found) throw new Error(`Importer ${id} did not load`);
    return found;
  };
  const path = `/contract/${id}/${c.fileName}`;

  it.skipIf(c.pool === null)('parses generated files: junk is malformed at its line, isolated, and parsing is deterministic', () => {
    const pool = c.pool ?? [];
    expect(pool.length).toBeGreaterThan(0);
    const ingestedAt = '2026-01-01 00:00:00.000';
    fc.assert(
      fc.property(entriesArb(pool), tailArb(pool), (entries, tail) => {
        const file = layout(entries, tail);
        const parsed = importer().parseFile(path, file.data);
        const malformed = parsed.malformed ?? [];
        const lineCount = file.lineText.length - 1;
        const isCompleteLine = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= lineCount && (file.lineText[n] ?? '').trim() !== '';

        // The torn tail waits for the next import: nothing names it.
        expect(parsed.completeBytes).toBe(file.completeBytes);

        // Every junk line is a malformed record with its exact line, bytes and end.
        const junkLines = new Set<number>();
        entries.forEach((e, i) => {
          if (e.kind !== 'junk') return;
          const n = i + 1;
          junkLines.add(n);
          const found = malformed.filter((m) => m.line === n);
          expect(found, `junk line ${n}: ${JSON.stringify(e.text)}`).toHaveLength(1);
          expect(found[0]).toMatchObject({ raw: file.lineText[n], endOffset: file.lineEnd[n] });
          expect(['invalid_json', 'not_an_object']).toContain(found[0]?.problem);
        });

        // Every malformed record names a complete line, ends with it, and carries its bytes
        // (the whole line; for OTLP the JSON text of the span or log record inside it).
        for (const m of malformed) {
          expect(isCompleteLine(m.line), `malformed line ${m.line}`).toBe(true);
          expect(m.endOffset).toBe(file.lineEnd[m.line]);
          expect(m.problem).toMatch(/^\S+$/);
          expect(m.detail).toMatch(/^\S.*\.$/);
          const raw = typeof m.raw === 'string' ? m.raw : Buffer.from(m.raw).toString('utf8');
          if (c.oneRecordPerLine) expect(raw).toBe(file.lineText[m.line]);
          else {
            expect(file.lineText[m.line]).toContain(raw);
            if (!junkLines.has(m.line) && raw !== file.lineText[m.line]) expect(() => JSON.parse(raw) as unknown).not.toThrow();
          }
        }
        const keys = malformed.map((m) => (c.oneRecordPerLine ? String(m.line) : `${m.line}\u0000${String(m.raw)}`));
        expect(new Set(keys).size, 'one malformed record per record').toBe(keys.length);

        // Every event names a complete line and ends with it, and the pipeline accepts it.
        for (const e of parsed.events) {
          const n = Number(e.source.slice(path.length + 1));
          expect(e.source.startsWith(`${path}:`) && isCompleteLine(n), `event source ${e.source}`).toBe(true);
          expect(e.endOffset).toBe(file.lineEnd[n]);
          const outcome = decodeEvent(Buffer.from(e.envelope.text, 'utf8'), e.source, ingestedAt);
          expect(outcome.kind, `${e.source}: ${outcome.kind === 'dead' ? outcome.dead.detail : ''}`).not.toBe('dead');
        }

        // Records accounted for, none twice: counters of single records, malformed records and
        // (where one record is one event at most) events never exceed the records read.
        if (c.oneRecordPerLine) expect(parsed.recordsRead).toBe(file.lineText.filter((t, n) => n > 0 && t.trim() !== '').length);
        const bounded = sum(parsed.skipped, c.perRecordCounter) + malformed.length + (c.eventsInBound ? parsed.events.length : 0);
        expect(bounded).toBeLessThanOrEqual(parsed.recordsRead);

        // Junk is isolated: blanking the junk lines (same line numbers) changes nothing else.
        const blanked = layout(
          entries.map((e): Entry => (e.kind === 'junk' ? { kind: 'blank', text: '' } : e)),
          tail,
        );
        expect(comparable(importer().parseFile(path, blanked.data))).toEqual(comparable(parsed, junkLines));

        // Stable ids: the same bytes parse to the same events, malformed records and counters.
        const again = importer().parseFile(path, Buffer.from(file.data));
        expect(again).toEqual(parsed);
      }),
      PROPERTY,
    );
  });

  describe('one malformed line imported for real', () => {
    it.skipIf(c.cleanFile === null)('is exactly one import_malformed dead letter with its bytes and path:line; events in = rows + dead letters', async () => {
      const lines = readFileSync(c.cleanFile ?? '', 'utf8').split('\n').filter((l) => l.trim() !== '');
      // The junk goes after the first record, so the records around it still join.
      const junk = '{"this line": is not JSON';
      const junkLine = 2;
      const dir = join(tmp.dir, id);
      mkdirSync(dir);
      const file = join(dir, c.fileName);
      writeFileSync(file, [lines[0], junk, ...lines.slice(1)].join('\n') + '\n');
      const summary = await runImport(importer(), [file], sink);

      expect(summary.malformedRecords).toBe(1);
      const counts = summary.counts;
      expect(counts.eventsRead).toBe(counts.rowsWritten + counts.deadLetters);
      expect(counts.deadLetters).toBe(1);
      expect(counts.rowsWritten).toBeGreaterThan(0);
      const rows = await sink.queryRows<{ reason: string; raw: string; raw_bytes: string | number; source: string; detail: string }>({
        query: 'SELECT reason, raw, raw_bytes, source, detail FROM dead_letters FINAL WHERE startsWith(source, {file:String})',
        query_params: { file: `${file}:` },
      });
      expect(rows).toEqual([{ reason: 'import_malformed', raw: junk, raw_bytes: expect.anything(), source: `${file}:${junkLine}`, detail: expect.stringMatching(/^invalid_json: The record is not valid JSON/) }]);
      expect(Number(rows[0]?.raw_bytes)).toBe(Buffer.byteLength(junk));

      // Grown by a record, the file is parsed again: the malformed line ends before the
      // previous import's end, so it is not written again.
      appendFileSync(file, `${lines[lines.length - 1] ?? ''}\n`);
      const grown = await runImport(importer(), [file], sink);
      expect(grown.filesRead).toBe(1);
      expect(grown.malformedRecords).toBe(0);
      expect(grown.counts.deadLetters).toBe(0);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Whole-document formats (a JSON array rewritten whole: Cline's task files): generated documents
// of real elements, damaged elements and junk elements; junk documents; one damaged element
// imported for real.

/** Spans of a generated document's elements: where each starts, for its line. */
function documentOf(elements: readonly string[], pretty: boolean, shape: DocumentShape = { head: undefined }): { data: Buffer; lineOf: number[] } {
  const { text, lineOf } = documentText(elements, shape, pretty);
  return { data: Buffer.from(text, 'utf8'), lineOf };
}

const junkElementArb: fc.Arbitrary<string> = fc.oneof(fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'), fc.constantFrom('null', '42', '"x"', '[]', '[{}]', 'true')).filter((t) => {
  const v: unknown = JSON.parse(t);
  return typeof v !== 'object' || v === null || Array.isArray(v);
});

describe.each([...DOCUMENT_IDS].map((id) => [id, documentCase(id)] as const))('importer contract (whole documents): %s', (id, c) => {
  const importer = (): Importer => {
    const found = importers.get(id);
    if (!found) throw new Error(`Importer ${id} did not load`);
    return found;
  };

  it.each([...c.pools.keys()])('%s: generated documents parse without a throw, deterministically; every malformed record is an element at its line; every event is one the decoder accepts', (name) => {
    const pool = c.pools.get(name) ?? [];
    expect(pool.length).toBeGreaterThan(0);
    const path = `/contract/${id}/tasks/1760000000000/${name}`;
    const element = fc.oneof(
      { arbitrary: fc.constantFrom(...pool).map((text) => ({ kind: 'record' as const, text })), weight: 4 },
      {
        arbitrary: fc.record({ text: fc.constantFrom(...pool), pick: fc.nat(), replacement: fc.constantFrom<unknown>(REMOVE, REMOVE, null, 42, -1, 1.5, '', 'x', true, [], {}, '{"tokensIn":-3}', '1786407295000000000') }).map(({ text, pick, replacement }) => {
          const value: unknown = JSON.parse(text);
          const paths = pathsOf(value, 10);
          const path = paths[pick % Math.max(paths.length, 1)];
          return { kind: 'damaged' as const, text: path === undefined ? text : JSON.stringify(damaged(value, path, replacement)) };
        }),
        weight: 4,
      },
      { arbitrary: junkElementArb.map((text) => ({ kind: 'junk' as const, text })), weight: 1 },
    );
    fc.assert(
      fc.property(fc.array(element, { minLength: 1, maxLength: 12 }), fc.boolean(), (elements, pretty) => {
        const shape = c.shapes.get(name);
        const doc = documentOf(elements.map((e) => e.text), pretty, shape);
        const parsed = importer().parseFile(path, doc.data);
        expect(parsed.completeBytes).toBe(0);
        expect(parsed.recordsRead).toBe(elements.length);
        const malformed = parsed.malformed ?? [];
        // Every junk element is exactly one malformed record with its text, at its line.
        elements.forEach((e, i) => {
          if (e.kind !== 'junk') return;
          const found = malformed.filter((m) => m.raw === e.text && m.line === doc.lineOf[i]);
          expect(found.length, `junk element ${i}: ${e.text}`).toBeGreaterThanOrEqual(1);
        });
        const texts = new Set(elements.map((e) => e.text));
        for (const m of malformed) {
          expect(texts.has(String(m.raw)), `malformed raw is an element: ${String(m.raw).slice(0, 100)}`).toBe(true);
          expect(doc.lineOf).toContain(m.line);
          expect(m.endOffset).toBe(doc.data.length);
          expect(m.problem).toMatch(/^\S+$/);
          expect(m.detail).toMatch(/^\S.*\.$/);
        }
        for (const e of parsed.events) {
          expect(e.endOffset).toBe(doc.data.length);
          expect(doc.lineOf.map((n) => `${path}:${n}`)).toContain(e.source);
          const outcome = decodeEvent(Buffer.from(e.envelope.text, 'utf8'), e.source, '2026-01-01 00:00:00.000');
          expect(outcome.kind, `${e.source}: ${outcome.kind === 'dead' ? outcome.dead.detail : ''}`).not.toBe('dead');
        }
        expect(importer().parseFile(path, Buffer.from(doc.data))).toEqual(parsed);
        // The same elements compact or pretty printed: the same events, malformed records by problem, counters.
        const other = importer().parseFile(path, documentOf(elements.map((e) => e.text), !pretty, shape).data);
        expect(other.events.map((e) => e.envelope.text)).toEqual(parsed.events.map((e) => e.envelope.text));
        // (Compact, every element is on line 1: equal junk elements there are one dead letter, as their source and bytes are one.)
        const kinds = (p: ParsedFile): string[] => [...new Set((p.malformed ?? []).map((m) => `${m.problem} ${String(m.raw)}`))];
        expect(kinds(other)).toEqual(kinds(parsed));
        expect(other.skipped).toEqual(parsed.skipped);
      }),
      PROPERTY,
    );
  });

  it('a document that is not of its format (no JSON array, no thread object) is one malformed record with its bytes, and nothing else', () => {
    const name = [...c.pools.keys()][0] ?? 'x.json';
    const path = `/contract/${id}/tasks/1/${name}`;
    const shape = c.shapes.get(name) ?? { head: undefined };
    fc.assert(
      fc.property(fc.oneof(junkArb, fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null')).filter((t) => { try { return !isDocument(JSON.parse(t), shape); } catch { return true; } }), (text) => {
        const data = Buffer.from(text, 'utf8');
        const parsed = importer().parseFile(path, data);
        expect(parsed.events).toEqual([]);
        if (data.toString('utf8').trim() === '') return;
        expect(parsed.malformed).toHaveLength(1);
        expect(parsed.malformed?.[0]).toMatchObject({ line: 1, endOffset: data.length });
      }),
      PROPERTY,
    );
  });

  it('one damaged element imported for real is exactly one import_malformed dead letter; events in = rows + dead letters', async () => {
    const { elements, shape } = elementsOf(JSON.parse(readFileSync(c.cleanFile, 'utf8')));
    const write = (list: unknown[]): string => documentText(list.map((e) => JSON.stringify(e)), shape, false).text;
    const dir = join(tmp.dir, id, 'tasks', basename(join(c.cleanFile, '..')));
    mkdirSync(dir, { recursive: true });
    const file = join(dir, basename(c.cleanFile));
    writeFileSync(file, write([...elements.slice(0, 1), 17, ...elements.slice(1)]));
    const summary = await runImport(importer(), [file], sink);
    expect(summary.malformedRecords).toBe(1);
    expect(summary.counts.eventsRead).toBe(summary.counts.rowsWritten + summary.counts.deadLetters);
    expect(summary.counts.deadLetters).toBe(1);
    expect(summary.counts.rowsWritten).toBeGreaterThan(0);
    const rows = await sink.queryRows<{ reason: string; raw: string; source: string }>({
      query: 'SELECT reason, raw, source FROM dead_letters FINAL WHERE startsWith(source, {file:String})',
      query_params: { file: `${file}:` },
    });
    expect(rows).toEqual([{ reason: 'import_malformed', raw: '17', source: `${file}:1` }]);
    // Unchanged, the document is not read again; rewritten whole and grown, its dead letter is the same one.
    expect((await runImport(importer(), [file], sink)).filesRead).toBe(0);
    writeFileSync(file, write([...elements.slice(0, 1), 17, ...elements.slice(1), { role: 'user', content: 'later' }]));
    const again = await runImport(importer(), [file], sink);
    expect(again.filesRead).toBe(1);
    const stored = await sink.queryRows<{ n: string }>({ query: 'SELECT count() AS n FROM dead_letters FINAL WHERE startsWith(source, {file:String})', query_params: { file: `${file}:` } });
    expect(Number(stored[0]?.n)).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
// Whole-document binary formats (a SQLite database read through the engine: Goose): the fixture
// database reads without a malformed record, deterministically, every event one the decoder
// accepts; bytes that are no database of the format are one malformed record with its bytes;
// the database cut short anywhere never throws, and what it gives is well formed.

describe.each([...BINARY_IDS].map((id) => [id, FIXTURE_FILES.get(id) ?? []] as const))('importer contract (binary documents): %s', (id, files) => {
  const importer = (): Importer => {
    const found = importers.get(id);
    if (!found) throw new Error(`Importer ${id} did not load`);
    return found;
  };
  const wellFormed = (path: string, data: Buffer, parsed: ParsedFile): void => {
    expect(parsed.completeBytes).toBe(0);
    for (const m of parsed.malformed ?? []) {
      expect(m.endOffset).toBe(data.length);
      expect(m.line).toBeGreaterThanOrEqual(1);
      expect(m.problem).toMatch(/^\S+$/);
      expect(m.detail).toMatch(/^\S.*\.$/s);
    }
    for (const e of parsed.events) {
      expect(e.endOffset).toBe(data.length);
      expect(e.source.startsWith(`${path}:`)).toBe(true);
      const outcome = decodeEvent(Buffer.from(e.envelope.text, 'utf8'), e.source, '2026-01-01 00:00:00.000');
      expect(outcome.kind, `${e.source}: ${outcome.kind === 'dead' ? outcome.dead.detail : ''}`).not.toBe('dead');
    }
  };

  it('the fixture databases read without a malformed record, deterministically, every event one the decoder accepts', () => {
    for (const f of files) {
      const data = readFileSync(f);
      const parsed = importer().parseFile(f, data);
      expect(parsed.malformed ?? []).toEqual([]);
      expect(parsed.events.length).toBeGreaterThan(0);
      wellFormed(f, data, parsed);
      expect(importer().parseFile(f, Buffer.from(data))).toEqual(parsed);
    }
  });

  it('bytes that are no database of the format are one malformed record with those bytes, and nothing else', () => {
    const path = `/contract/${id}/${basename(files[0] ?? 'x.db')}`;
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 300 }), fc.jsonValue().map((v) => new Uint8Array(Buffer.from(JSON.stringify(v) ?? 'null')))), (bytes) => {
        const data = Buffer.from(bytes);
        const parsed = importer().parseFile(path, data);
        expect(parsed.events).toEqual([]);
        expect(parsed.malformed).toHaveLength(1);
        expect(parsed.malformed?.[0]).toMatchObject({ line: 1, endOffset: data.length });
        expect(Buffer.from(parsed.malformed?.[0]?.raw ?? '').equals(data)).toBe(true);
      }),
      { seed: 14, numRuns: 50 },
    );
  });

  it('a database cut short or with bytes overwritten never throws; what it gives is well formed and deterministic', () => {
    const data = readFileSync(files[0] ?? '');
    const path = `/contract/${id}/${basename(files[0] ?? 'x.db')}`;
    fc.assert(
      fc.property(fc.nat({ max: data.length - 1 }), fc.nat({ max: data.length - 1 }), fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.boolean(), (cut, at, bytes, truncate) => {
        const damaged = Buffer.from(data);
        if (!truncate) damaged.set(bytes.subarray(0, Math.max(0, damaged.length - at)), at);
        const doc = truncate ? damaged.subarray(0, Math.max(1, cut)) : damaged;
        const parsed = importer().parseFile(path, doc);
        wellFormed(path, doc, parsed);
        expect(importer().parseFile(path, Buffer.from(doc))).toEqual(parsed);
      }),
      { seed: 14, numRuns: 25 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Line formats of text that is no JSON (Aider's Markdown history): generated files of the
// fixture's lines, their damaged copies and random text never throw; parsing is deterministic;
// every malformed record and event names a complete line and ends with it (a malformed record
// carries the line's text); every event is one the decoder accepts; CRLF changes nothing but offsets.

describe.each([...TEXT_IDS].map((id) => [id, FIXTURE_FILES.get(id) ?? []] as const))('importer contract (text lines): %s', (id, files) => {
  const importer = (): Importer => {
    const found = importers.get(id);
    if (!found) throw new Error(`Importer ${id} did not load`);
    return found;
  };
  const pool = files.flatMap((f) => readFileSync(f, 'utf8').split('\n')).filter((l) => l.length <= MAX_POOL_LINE_CHARS);
  it('generated files parse without a throw, deterministically; malformed records and events name complete lines; events decode', () => {
    const path = `/contract/${id}/${basename(files[0] ?? 'x.md')}`;
    const lineArb = fc.oneof(
      { arbitrary: fc.constantFrom(...pool), weight: 6 },
      { arbitrary: fc.record({ text: fc.constantFrom(...pool), at: fc.nat(), junk: fc.string({ maxLength: 12 }) }).map(({ text, at, junk }) => (text.slice(0, at % (text.length + 1)) + junk + text.slice(at % (text.length + 1))).replace(/[\r\n]/g, ' ')), weight: 3 },
      { arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((t) => t.replace(/[\r\n]/g, ' ')), weight: 1 },
    );
    fc.assert(
      fc.property(fc.array(lineArb, { minLength: 1, maxLength: 40 }), (lines) => {
        const data = Buffer.from(lines.join('\n') + '\n', 'utf8');
        const parsed = importer().parseFile(path, data);
        expect(parsed.completeBytes).toBe(data.length);
        const ends: number[] = [0];
        let at = 0;
        for (const l of lines) ends.push((at += Buffer.byteLength(l, 'utf8') + 1));
        for (const m of parsed.malformed ?? []) {
          expect(m.endOffset).toBe(ends[m.line]);
          expect(String(m.raw)).toBe(lines[m.line - 1]);
          expect(m.detail).toMatch(/^\S.*\.$/);
        }
        for (const e of parsed.events) {
          const n = Number(e.source.slice(path.length + 1));
          expect(e.endOffset).toBe(ends[n]);
          const outcome = decodeEvent(Buffer.from(e.envelope.text, 'utf8'), e.source, '2026-01-01 00:00:00.000');
          expect(outcome.kind, e.envelope.text).not.toBe('dead');
        }
        expect(importer().parseFile(path, Buffer.from(data))).toEqual(parsed);
        const crlf = importer().parseFile(path, Buffer.from(lines.join('\r\n') + '\r\n', 'utf8'));
        expect(crlf.events.map((e) => e.envelope.text)).toEqual(parsed.events.map((e) => e.envelope.text));
        expect((crlf.malformed ?? []).map((m) => [m.line, m.problem])).toEqual((parsed.malformed ?? []).map((m) => [m.line, m.problem]));
      }),
      PROPERTY,
    );
  });
});
