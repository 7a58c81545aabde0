// Fuzzing every importer (IMPORTER_IDS) with files of its harness's real format damaged at the
// byte level and the JSON level: truncated records, invalid UTF-8, NUL bytes, BOMs, CR, CRLF
// files, huge strings, deep nesting, duplicate keys, numbers beyond 2^64, wrong types, other
// harnesses' records. test/importers/contract.test.ts checks junk lines and member-level damage
// (junk isolated, ids stable, one junk line end to end); this suite adds the byte-level damage and
// the accounting: every record is an event, a malformed record (a dead letter) or a counted skip.
//
// For every generated file: parseFile does not throw and is deterministic; the complete lines
// are the records read; a line that is no JSON object is one malformed record at its line with
// its text; every malformed record and event names a complete line and ends with it; every event
// is one the decoder accepts; a CRLF copy of the file parses the same. For every record alone:
// it yields an event, a malformed record or a skip counter, unless it only sets context for
// later records (a Claude Code prompt, a Codex session_meta / turn_context / task_started).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEvent, DEFAULT_LIMITS } from '../../src/decode/event.ts';
import { loadImporter } from '../../src/importers/registry.ts';
import { IMPORTER_IDS, type Importer, type ImporterId, type ParsedFile } from '../../src/importers/types.ts';
import { corpusOrSkip } from '../helpers/corpus.ts';
import { fuzz, log, runsOf } from './harness.ts';
import { documentText, elementsOf as documentElements } from '../importers/documents.ts';
import { envelopeSeeds, mutatedLine, randomLine, REPO, seedLines } from './lines.ts';

const IMPORTER_FIXTURES = join(REPO, 'test', 'importers');
const NO_REDACT = { ...DEFAULT_LIMITS, redact: false };

const jsonlIn = (dir: string): string[] =>
  readdirSync(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .sort()
    .map((n) => join(dir, n));

interface Format {
  /** Real records of the harness's format (lines); null when the corpus is absent. */
  readonly pool: Buffer[] | null;
  /** The file name generated files get (some importers read the name). */
  readonly fileName: string;
  /** One line is one record (OTLP lines hold many spans and logs). */
  readonly oneRecordPerLine: boolean;
  /** Records that only set context for the records after them: alone, they yield nothing. */
  readonly contextRecord: (record: Record<string, unknown>) => boolean;
}

function format(id: ImporterId): Format {
  const suite = `the ${id} importer fuzz test`;
  const lines = (paths: (string | null)[]): Buffer[] | null => (paths.some((p) => p === null) ? null : paths.flatMap((p) => seedLines(p as string, 16 * 1024)));
  const none = (): boolean => false;
  switch (id) {
    case 'claude-code': {
      const projects = corpusOrSkip('claude-code/projects', suite);
      return {
        pool: lines([join(IMPORTER_FIXTURES, 'fixtures-claude-code', 'tool-search.jsonl'), ...(projects ? [join(projects, 'spotter', 'short.jsonl'), join(projects, 'spotter', 'tool_heavy.jsonl')] : [null])]),
        fileName: 'fuzz-session.jsonl',
        oneRecordPerLine: true,
        // A prompt line starts a turn: the tool calls after it carry its uuid. An assistant line
        // without usage and tool calls carries nothing, and is not counted (the importer's README).
        contextRecord: (r) => {
          if (r['type'] === 'user') return true;
          const message = r['message'] as Record<string, unknown> | undefined;
          const content = message?.['content'];
          const toolUse = Array.isArray(content) && content.some((b) => typeof b === 'object' && b !== null && (b as Record<string, unknown>)['type'] === 'tool_use');
          return r['type'] === 'assistant' && (message?.['usage'] === undefined || message['usage'] === null) && !toolUse;
        },
      };
    }
    case 'codex': {
      const samples = corpusOrSkip('samples/codex', suite);
      const sessions = corpusOrSkip('codex/sessions/2025/08/14', suite);
      return {
        pool: samples && sessions ? lines([...jsonlIn(samples), ...jsonlIn(sessions).slice(0, 2)]) : null,
        fileName: 'rollout-2025-10-10T01-09-47-0199cee2-0000-7000-8000-00000000c0de.jsonl',
        oneRecordPerLine: true,
        contextRecord: (r) => {
          const payload = r['payload'] as Record<string, unknown> | undefined;
          // The legacy format's first line is a bare session meta (an id, no type).
          const legacyMeta = !('type' in r) && !('record_type' in r) && typeof r['id'] === 'string' && r['id'] !== '';
          return legacyMeta || r['type'] === 'session_meta' || r['type'] === 'turn_context' || (r['type'] === 'event_msg' && (payload?.['type'] === 'task_started' || payload?.['type'] === 'turn_started'));
        },
      };
    }
    case 'opencode': {
      const samples = corpusOrSkip('samples/opencode', suite);
      return { pool: samples ? lines(jsonlIn(samples)) : null, fileName: 'capture.jsonl', oneRecordPerLine: true, contextRecord: none };
    }
    case 'otlp': {
      const genai = corpusOrSkip('samples/otel_genai', suite);
      const claude = corpusOrSkip('samples/claude_code_otel', suite);
      const pool = genai && claude ? lines([...jsonlIn(genai), ...jsonlIn(claude)]) : null;
      // The GenAI samples' service names no harness: the same lines as a Codex service sends them.
      return {
        pool: pool && [...pool, ...pool.map((l) => Buffer.from(l.toString('utf8').replaceAll('"agef-demo-agent"', '"codex_exec"')))],
        fileName: 'export.jsonl',
        oneRecordPerLine: false,
        // An export without a span or a log record in it has nothing to account for.
        contextRecord: (r) => otlpItems(r) === 0,
      };
    }
    case 'gemini-cli': {
      const chats = join(IMPORTER_FIXTURES, 'fixtures-gemini-cli', 'tmp', 'a3f1c9e07b52d4186e0f9c2b7d31a5e8f4c6b0d29e7a1f3c5b8d0e2a4c6f8b1d', 'chats');
      return {
        pool: lines([join(chats, 'session-2026-04-29T21-39-7c1e4a2b.jsonl')]),
        fileName: 'session-2026-04-29T21-39-7c1e4a2b.jsonl',
        oneRecordPerLine: true,
        // The session's metadata line, user and info messages, `$set` / `$rewindTo` updates and a
        // model message with neither tokens nor tool calls only set context (or say nothing).
        contextRecord: (r) => !('tokens' in r) && !('toolCalls' in r),
      };
    }
    case 'acp':
      return { pool: lines(jsonlIn(join(IMPORTER_FIXTURES, 'fixtures-acp'))), fileName: 'capture.jsonl', oneRecordPerLine: true, contextRecord: none };
    case 'qwen-code': {
      const chats = join(IMPORTER_FIXTURES, 'fixtures-qwen-code', 'projects', '-home-mei-src-ledger', 'chats');
      return {
        pool: lines([join(chats, '5b0c1e8a-3f4d-4c2a-9e71-8d2f6a4b3c10.jsonl'), join(chats, 'c2a9e4d1-7b36-4f05-a8e2-6d1f0b9c5e47.jsonl')]),
        fileName: '5b0c1e8a-3f4d-4c2a-9e71-8d2f6a4b3c10.jsonl',
        oneRecordPerLine: true,
        // A prompt (a user record) only starts a turn for the records after it.
        contextRecord: (r) => r['type'] === 'user',
      };
    }
    case 'copilot-cli': {
      const state = join(IMPORTER_FIXTURES, 'fixtures-copilot-cli', 'session-state');
      return {
        pool: lines([join(state, '3f6b2c1d-8e4a-4b7f-9c2d-1a0e5f6b7c8d', 'events.jsonl'), join(state, '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', 'events.jsonl')]),
        fileName: 'events.jsonl',
        oneRecordPerLine: true,
        // Session starts, resumes, model changes and user messages set the session's model and
        // turn for the events after them.
        contextRecord: (r) => ['session.start', 'session.resume', 'session.model_change', 'user.message'].includes(String(r['type'])),
      };
    }
    case 'pi-agent': {
      const dir = join(IMPORTER_FIXTURES, 'fixtures-pi-agent', 'sessions', '--home-ada-src-orbit--');
      return {
        pool: lines([join(dir, '2026-11-02T08-00-00-000Z_8f14e45f-ceea-467e-9a3b-2c1d5e6f7a80.jsonl'), join(dir, '2026-11-02T09-00-00-000Z_c9f0f895-fb98-4b91-8e4d-7a6b5c4d3e21.jsonl')]),
        fileName: '2026-11-02T08-00-00-000Z_8f14e45f-ceea-467e-9a3b-2c1d5e6f7a80.jsonl',
        oneRecordPerLine: true,
        // The header (session id, fork time) and user messages (the turn) only set context.
        contextRecord: (r) => r['type'] === 'session' || (typeof r['message'] === 'object' && r['message'] !== null && (r['message'] as Record<string, unknown>)['role'] === 'user'),
      };
    }
    case 'openclaw': {
      const dir = join(IMPORTER_FIXTURES, 'fixtures-openclaw', 'agents');
      return {
        pool: lines([join(dir, 'main', 'sessions', '3b9e2c71-5d4a-4f86-9c10-7e2a1b4c8d55.jsonl'), join(dir, 'coder', 'sessions', 'e7c2a9d4-1b58-4f03-b6e1-9d4a2c7f8e31.jsonl')]),
        fileName: '3b9e2c71-5d4a-4f86-9c10-7e2a1b4c8d55.jsonl',
        oneRecordPerLine: true,
        // pi's parser: the header and user messages only set context.
        contextRecord: (r) => r['type'] === 'session' || (typeof r['message'] === 'object' && r['message'] !== null && (r['message'] as Record<string, unknown>)['role'] === 'user'),
      };
    }
    default:
      // A whole-document importer registered after the line formats above: fuzzed by the
      // document suite below, from the files its own listFiles finds in its fixture folder.
      if (DOCUMENTS.has(id) || BINARY.has(id)) return { pool: null, fileName: 'x.json', oneRecordPerLine: true, contextRecord: none };
      // A line-format importer registered after the ones above: fuzzed with the lines of the
      // files its own listFiles finds in its fixture folder, under the first one's name (its
      // parser counts every record it reads for context as a skip, so none is a context record).
      if (LINE_FILES.has(id)) {
        const files = LINE_FILES.get(id) ?? [];
        return { pool: lines(files), fileName: basename(files[0] ?? 'x.jsonl'), oneRecordPerLine: true, contextRecord: none };
      }
      throw new Error(`No fuzz format for ${id}: give it a case here, or fixtures-${id}/ files`);
  }
}

/** Whole-document importers (every fixture file they list is read as one document), with those files. */
const DOCUMENTS = new Map<ImporterId, string[]>();
/** Line-format importers without a case above: the fixture files their listFiles finds. */
const LINE_FILES = new Map<ImporterId, string[]>();
/** Binary whole-document importers (SQLite) and text line formats (Aider): checked in test/importers/contract.test.ts's binary and text suites. */
const BINARY = new Set<ImporterId>();
for (const id of IMPORTER_IDS) {
  // Its main fixture folder: the first its descriptor declares (Importer.samples).
  const importer = await loadImporter(id);
  const first = importer.samples.fixtures[0];
  if (first === undefined) continue;
  const dir = join(REPO, first);
  const files = importer.listFiles([dir]);
  // A binary document (a SQLite database) is checked by the contract suite's binary cases.
  if (files.length > 0 && files.every((f) => importer.readingOf(f).kind === 'document') && files.every((f) => !/^\s*[[{]/.test(readFileSync(f).subarray(0, 64).toString('latin1').replace(/^\xEF\xBB\xBF/, '')))) BINARY.add(id);
  else if (files.length > 0 && files.every((f) => importer.readingOf(f).kind === 'document')) DOCUMENTS.set(id, files);
  // A text line format (Aider's Markdown) is checked by the contract suite's text cases.
  else if (files.length > 0 && files.every((f) => importer.readingOf(f).kind === 'lines') && !files.every((f) => /^\s*\{/.test(readFileSync(f, 'utf8').split('\n').find((l) => l.trim() !== '') ?? ''))) BINARY.add(id);
  else if (files.length > 0 && files.every((f) => importer.readingOf(f).kind === 'lines')) LINE_FILES.set(id, files);
}

/** Spans and log records in an OTLP export line (whatever the types of the containers). */
function otlpItems(r: Record<string, unknown>): number {
  const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null) : []);
  let n = 0;
  for (const rs of list(r['resourceSpans'])) for (const ss of list(rs['scopeSpans'])) n += list(ss['spans']).length;
  for (const rl of list(r['resourceLogs'])) for (const sl of list(rl['scopeLogs'])) n += list(sl['logRecords']).length;
  return n;
}

/** Records of other formats: the repository's envelope fixtures, as foreign lines. */
const FOREIGN = envelopeSeeds().valid.filter((_, i) => i % 7 === 0);

/** A file's entries: real records, damaged ones, random lines, foreign ones, blank lines. */
function entriesArb(pool: readonly Buffer[]): fc.Arbitrary<Uint8Array[]> {
  return fc.array(
    fc.oneof(
      { arbitrary: fc.constantFrom(...pool), weight: 4 },
      { arbitrary: mutatedLine(pool), weight: 5 },
      { arbitrary: randomLine, weight: 1 },
      { arbitrary: fc.constantFrom(...FOREIGN), weight: 1 },
      { arbitrary: fc.constantFrom('', ' ', '\t', '\r').map((t) => Buffer.from(t)), weight: 1 },
    ),
    { minLength: 1, maxLength: 8 },
  );
}

/** A generated file: its entries (LF inside an entry splits it, as in a real file), BOM, torn tail. */
interface FileCase {
  readonly data: Buffer;
  /** The same records with CRLF line endings (undefined when an entry ends with CR itself). */
  readonly crlf: Buffer | undefined;
}

const fileArb = (pool: readonly Buffer[]): fc.Arbitrary<FileCase> =>
  fc.tuple(entriesArb(pool), fc.boolean(), fc.constantFrom('newline', 'newline', 'torn', 'none')).map(([entries, bom, ending]) => {
    const parts: Buffer[] = [];
    const crlfParts: Buffer[] = [];
    entries.forEach((e, i) => {
      const last = i === entries.length - 1;
      const b = Buffer.from(e);
      const nl = !last || ending === 'newline';
      const piece = last && ending === 'torn' ? b.subarray(0, Math.max(1, b.length >> 1)) : b;
      parts.push(piece, ...(nl ? [Buffer.from('\n')] : []));
      crlfParts.push(Buffer.from(piece.toString('latin1').replaceAll('\n', '\r\n'), 'latin1'), ...(nl ? [Buffer.from('\r\n')] : []));
    });
    const prefix = bom ? [Buffer.from([0xef, 0xbb, 0xbf])] : [];
    const anyCr = entries.some((e) => e.includes(0x0d));
    return { data: Buffer.concat([...prefix, ...parts]), crlf: anyCr ? undefined : Buffer.concat([...prefix, ...crlfParts]) };
  });

interface Line {
  readonly n: number;
  readonly text: string;
  readonly bytes: Buffer;
  readonly end: number;
}

/** The complete lines as the importers read them: UTF-8, a trailing CR dropped, blank ones not records. */
function completeLines(data: Buffer, completeBytes: number): Line[] {
  const out: Line[] = [];
  let start = 0;
  let n = 0;
  while (start < completeBytes) {
    const nl = data.indexOf(0x0a, start);
    const end = nl < 0 || nl >= completeBytes ? completeBytes : nl;
    n++;
    let bytes = data.subarray(start, end);
    if (bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, -1);
    const text = bytes.toString('utf8');
    if (text.trim() !== '') out.push({ n, text, bytes, end: end === completeBytes && nl !== end ? completeBytes : end + 1 });
    start = end + 1;
  }
  return out;
}

function isJsonObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

function ok(condition: boolean, message: string | (() => string)): asserts condition {
  if (!condition) throw new Error(typeof message === 'string' ? message : message());
}

const comparable = (p: ParsedFile) => ({
  events: p.events.map((e) => [e.envelope.text, e.source]),
  malformed: (p.malformed ?? []).map((m) => [m.line, m.problem, m.detail]),
  skipped: p.skipped,
  recordsRead: p.recordsRead,
});

/** What the suite saw, per importer, printed at the end. */
const stats = new Map<ImporterId, { files: number; events: number; malformed: number; skipped: number; lossyMalformed: number }>();

const importers = new Map<ImporterId, Importer>();
beforeAll(async () => {
  for (const id of IMPORTER_IDS) importers.set(id, await loadImporter(id));
});

const FORMATS = IMPORTER_IDS.filter((id) => !DOCUMENTS.has(id) && !BINARY.has(id)).map((id) => [id, format(id)] as const);
/** The importers fuzzed in this run (the others skip loudly): they share the case budget. */
const FUZZED = Math.max(1, FORMATS.filter(([, f]) => f.pool !== null).length);

describe.each(FORMATS)('fuzz: importer %s', (id, f) => {
  const path = `/fuzz/${id}/${f.fileName}`;
  const importer = (): Importer => importers.get(id) as Importer;
  const s = { files: 0, events: 0, malformed: 0, skipped: 0, lossyMalformed: 0 };
  stats.set(id, s);

  it.skipIf(f.pool === null)('mutated files: no throw, deterministic, every record an event, a malformed record or a skip', () => {
    const pool = f.pool ?? [];
    const runs = Math.round(runsOf('importers: mutated files') / FUZZED);
    fuzz(`importers: ${id}: mutated files`, fileArb(pool), runs, (c) => c.data, (c) => {
      const parsed = importer().parseFile(path, c.data);
      s.files++;
      ok(isDeepStrictEqual(importer().parseFile(path, Buffer.from(c.data)), parsed), 'the same bytes parse the same');

      // The complete lines: up to the last newline, or the whole file when its tail is a record.
      const lastNl = c.data.lastIndexOf(0x0a) + 1;
      ok(parsed.completeBytes === lastNl || parsed.completeBytes === c.data.length, () => `completeBytes ${parsed.completeBytes} is neither ${lastNl} nor ${c.data.length}`);
      const lines = completeLines(c.data, parsed.completeBytes);
      const byNo = new Map(lines.map((l) => [l.n, l]));
      if (f.oneRecordPerLine) ok(parsed.recordsRead === lines.length, () => `recordsRead ${parsed.recordsRead}, complete lines ${lines.length}`);

      const malformed = parsed.malformed ?? [];
      s.malformed += malformed.length;
      s.events += parsed.events.length;
      s.skipped += Object.values(parsed.skipped).reduce((a, b) => a + b, 0);
      const malformedAt = new Map<number, number>();
      for (const m of malformed) {
        const line = byNo.get(m.line);
        ok(line !== undefined, `a malformed record at line ${m.line}, which is no complete record`);
        ok(m.endOffset === line.end, `malformed line ${m.line} ends at ${m.endOffset}, not ${line.end}`);
        ok(/^\S+$/.test(m.problem) && /^\S[\s\S]*\.$/.test(m.detail), `problem ${JSON.stringify(m.problem)}, detail ${JSON.stringify(m.detail)}`);
        const raw = typeof m.raw === 'string' ? Buffer.from(m.raw, 'utf8') : Buffer.from(m.raw);
        if (f.oneRecordPerLine) {
          ok(raw.toString('utf8') === line.text, `malformed line ${m.line}: its raw text is not the line's`);
          // The bytes of the record exactly, unless the line is no UTF-8 (read as text, it is not the same bytes).
          if (!raw.equals(line.bytes)) s.lossyMalformed++;
        } else ok(line.text.includes(raw.toString('utf8')), `malformed line ${m.line}: its raw text is not in the line`);
        malformedAt.set(m.line, (malformedAt.get(m.line) ?? 0) + 1);
      }
      // A line that is no JSON object is exactly one malformed record at its line.
      for (const l of lines) {
        // (A byte order mark at the start of the file is not part of the first record; OTLP
        // drops one at the start of any line.)
        if (isJsonObject(l.text.replace(/^\uFEFF/, ''))) continue;
        ok(malformedAt.get(l.n) === 1, () => `line ${l.n} is no JSON object but has ${malformedAt.get(l.n) ?? 0} malformed records: ${JSON.stringify(l.text.slice(0, 200))}`);
      }
      if (f.oneRecordPerLine) for (const [n, k] of malformedAt) ok(k === 1, `line ${n} has ${k} malformed records`);

      // Every event names a complete line, ends with it, and is an event the decoder accepts.
      for (const e of parsed.events) {
        const n = Number(e.source.slice(path.length + 1));
        const line = byNo.get(n);
        ok(e.source.startsWith(`${path}:`) && line !== undefined, `event source ${e.source}`);
        ok(e.endOffset === line.end, `event of line ${n} ends at ${e.endOffset}, not ${line.end}`);
        const o = decodeEvent(Buffer.from(e.envelope.text, 'utf8'), e.source, '2026-01-01 00:00:00.000', NO_REDACT);
        if (o.kind === 'dead') throw new Error(`the importer wrote an event the decoder refuses (${o.dead.reason}: ${o.dead.detail}), from line ${n}: ${JSON.stringify(line.text.slice(0, 300))}`);
      }

      // CRLF line endings change nothing but the offsets.
      if (c.crlf) ok(isDeepStrictEqual(comparable(importer().parseFile(path, c.crlf)), comparable(parsed)), 'the CRLF copy parses the same');
    });
  });

  it.skipIf(f.pool === null)('one record alone: an event, a malformed record or a skip counter (or a context record)', () => {
    const pool = f.pool ?? [];
    const runs = Math.round(runsOf('importers: one record alone') / FUZZED);
    const arb = fc.oneof({ arbitrary: mutatedLine(pool), weight: 4 }, { arbitrary: fc.constantFrom(...pool), weight: 1 }, { arbitrary: randomLine, weight: 1 });
    fuzz(`importers: ${id}: one record alone`, arb, runs, (b) => b, (b) => {
      const line = Buffer.from(b);
      for (let i = 0; i < line.length; i++) if (line[i] === 0x0a) line[i] = 0x20;
      const data = Buffer.concat([line, Buffer.from('\n')]);
      const text = line.toString('utf8').replace(/\r$/, '').replace(/^\uFEFF/, '');
      if (text.trim() === '') return;
      const parsed = importer().parseFile(path, data);
      const accounted = parsed.events.length + (parsed.malformed?.length ?? 0) + Object.values(parsed.skipped).reduce((a, n) => a + n, 0);
      if (accounted > 0) return;
      let record: unknown;
      try {
        record = JSON.parse(text);
      } catch {
        throw new Error(`a line that is no JSON yields nothing: ${JSON.stringify(text.slice(0, 300))}`);
      }
      ok(typeof record === 'object' && record !== null && !Array.isArray(record) && f.contextRecord(record as Record<string, unknown>), () => `a record yields no event, no malformed record and no skip counter: ${JSON.stringify(text.slice(0, 400))}`);
    });
  });

  it.skipIf(f.pool === null)('reports what it saw', () => {
    log(`importers: ${id}: ${s.files} files: ${s.events} events, ${s.malformed} malformed records (${s.lossyMalformed} of lines that are no UTF-8, kept as text), ${s.skipped} skips`);
    if (s.files > 0) expect(s.events + s.malformed).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Whole-document formats: each fixture document damaged at the byte level (mutatedLine over its
// bytes, truncated, BOM-prefixed) and at the element level (one element replaced by random bytes
// or by another harness's record): no throw, deterministic, every malformed record an element's
// text or the document's, every event one the decoder accepts, ending at the document's end.

describe.each([...DOCUMENTS].map(([id, files]) => [id, files] as const))('fuzz: importer %s (whole documents)', (id, files) => {
  const importer = (): Importer => importers.get(id) as Importer;
  const docs = files.map((f) => ({ name: `/fuzz/${id}/tasks/${basename(dirname(f))}/${basename(f)}`, data: readFileSync(f) }));
  const elementsOf = (data: Buffer): string[] => documentElements(JSON.parse(data.toString('utf8'))).elements.map((e) => JSON.stringify(e));
  const docArb = fc.oneof(
    // Byte damage anywhere in a document (its elements are one line when compact).
    fc.record({ doc: fc.constantFrom(...docs), cut: fc.nat(), bom: fc.boolean() }).chain(({ doc, cut, bom }) =>
      mutatedLine([doc.data]).map((m) => ({ name: doc.name, data: Buffer.concat([bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), cut % 3 === 0 ? Buffer.from(m).subarray(0, Math.max(1, cut % Math.max(1, m.length))) : Buffer.from(m)]) })),
    ),
    // Element damage: one element replaced by a random line or a foreign record.
    fc.record({ doc: fc.constantFrom(...docs), at: fc.nat(), line: fc.oneof(randomLine, fc.constantFrom(...FOREIGN), mutatedLine(docs.flatMap((d) => elementsOf(d.data).map((e) => Buffer.from(e))))) }).map(({ doc, at, line }) => {
      const elements = elementsOf(doc.data);
      const text = Buffer.from(line).toString('utf8');
      let ok = true;
      try {
        JSON.parse(text);
      } catch {
        ok = false;
      }
      elements[at % elements.length] = ok ? text : JSON.stringify(text);
      return { name: doc.name, data: Buffer.from(documentText(elements, documentElements(JSON.parse(doc.data.toString('utf8'))).shape, false).text, 'utf8') };
    }),
  );
  it('damaged documents: no throw, deterministic, malformed records and events well formed', () => {
    const runs = Math.max(50, Math.round(runsOf('importers: mutated files') / FUZZED / 4));
    fuzz(`importers: ${id}: damaged documents`, docArb, runs, (c) => c.data, (c) => {
      const parsed = importer().parseFile(c.name, c.data);
      ok(isDeepStrictEqual(importer().parseFile(c.name, Buffer.from(c.data)), parsed), 'the same bytes parse the same');
      ok(parsed.completeBytes === 0, `completeBytes ${parsed.completeBytes}: a rewritten document is read whole each time`);
      const text = c.data.toString('utf8');
      for (const m of parsed.malformed ?? []) {
        const raw = typeof m.raw === 'string' ? m.raw : Buffer.from(m.raw).toString('utf8');
        ok(text.includes(raw.replace(/^\uFEFF/, '')), `malformed line ${m.line}: its raw text is not in the document`);
        ok(m.endOffset === c.data.length && m.line >= 1, `malformed record at ${m.line} ends at ${m.endOffset}`);
        ok(/^\S+$/.test(m.problem) && /^\S[\s\S]*\.$/.test(m.detail), `problem ${JSON.stringify(m.problem)}, detail ${JSON.stringify(m.detail)}`);
      }
      for (const e of parsed.events) {
        ok(e.endOffset === c.data.length && e.source.startsWith(`${c.name}:`), `event source ${e.source}, end ${e.endOffset}`);
        const o = decodeEvent(Buffer.from(e.envelope.text, 'utf8'), e.source, '2026-01-01 00:00:00.000', NO_REDACT);
        if (o.kind === 'dead') throw new Error(`the importer wrote an event the decoder refuses (${o.dead.reason}: ${o.dead.detail})`);
      }
      // Nothing read is silent: the elements are events, malformed records or counted skips (or the whole document is one malformed record).
      const accounted = parsed.events.length + (parsed.malformed?.length ?? 0) + Object.values(parsed.skipped).reduce((a, n) => a + n, 0);
      ok(accounted > 0 || text.replace(/^\uFEFF/, '').trim() === '[]', 'a document yields no event, no malformed record and no skip counter');
    });
  });
});
