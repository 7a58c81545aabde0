// Runs an importer into the sink through the same pipeline as replay (validate -> project ->
// account -> sink). Incremental: unchanged files are skipped; a grown file is re-parsed (joins
// and deduplication need its earlier content) but only events completed by its new bytes are
// written; the truncated tail of a file being written is left for the next import. A line
// format is streamed: read in chunks, each event handed to the batch writer as the parser
// completes it, so memory is bounded by the parser's pending state and one batch, not by the
// file. A whole-document format is read whole, up to its size limit.
import { readFileSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { nowClickHouseTime, DEFAULT_LIMITS, UNKNOWN_MACHINE, type DecodeLimits, type Machine } from '../decode/event.ts';
import { BatchWriter, emptyCounts, writerTarget, yieldToLoop, type BatchLimits, type FileTarget, type PipelineCounts } from './batch-writer.ts';
import { drive, type RecordSource, type RecordTake } from '../source/record.ts';
import type { AccountingConfig } from '../accounting/session.ts';
import type { TypedEvent } from '../decode/typed.ts';
import type { ImportFileState, ImportStates, Sink } from '../model/sink.ts';
import { READ_ONCE_MAX_BYTES, readLinePasses } from '../importers/stream.ts';
import type { ImportedEvent, Importer, LineParser, MalformedRecord, ParsedFile } from '../importers/types.ts';
import type { RawLine } from '../importers/lines.ts';

/** What an import read, whatever it wrote to (a database, or a Kafka topic). */
export interface ImportReading {
  readonly filesSeen: number;
  readonly filesRead: number;
  readonly filesUnchanged: number;
  readonly recordsRead: number;
  readonly eventsEmitted: number;
  /** Events already written by an earlier import of the same (grown) file. */
  readonly eventsAlreadyImported: number;
  /** Raw records the importer could not read, written as dead letters `import_malformed`. */
  readonly malformedRecords: number;
  readonly skippedRecords: Readonly<Record<string, number>>;
  readonly bytesParsed: number;
  /**
   * With `holdTail`: per file, the events kept back because the next lines may still change
   * them (LineParser.held); the file is recorded as read up to before them.
   */
  readonly held?: ReadonlyMap<string, number>;
  /** Files whose last line has no newline yet (read up to before it). */
  readonly unterminated?: ReadonlySet<string>;
  /**
   * With `holdTail`: per file read, the events handed out after the point recorded for it (a
   * file that holds events back is recorded up to before them, so its next read meets these
   * again): give them back as `handedOut` to the next read, once this one is acknowledged.
   */
  readonly handedOut?: ReadonlyMap<string, ReadonlySet<string>>;
}

export interface ImportSummary extends ImportReading {
  readonly counts: PipelineCounts;
}

/** What an importer has read of each file (a database's import_files, or a state file). */
export interface ImportStateStore {
  load(importer: string): Promise<Map<string, ImportFileState>>;
  /**
   * Records the files read by this run (after everything of theirs was acknowledged). Files
   * recorded before and not read now (unchanged, or deleted since) keep their records.
   */
  save(importer: string, files: ReadonlyMap<string, ImportFileState>, importedAt: string): Promise<void>;
}

/** Where an import's events (typed envelopes) go: the database (writerTarget) or a Kafka topic (import --to-kafka, which sends their lines). */
export type ImportTarget = FileTarget<TypedEvent>;

export interface ImportOptions {
  readonly limits?: DecodeLimits;
  readonly accounting?: AccountingConfig;
  /** Called as files are parsed: (files done, files total, bytes done, bytes total). */
  readonly onProgress?: (filesDone: number, filesTotal: number, bytesDone: number, bytesTotal: number) => void;
  /** Batch limits of the writer (the pipeline's defaults unless a test wants small batches). */
  readonly batch?: BatchLimits;
  /** Bytes read from disk at a time for a line format (1 MiB unless a test wants more chunks). */
  readonly chunkBytes?: number;
  /** Overrides each document format's size limit (a test of the limit). */
  readonly maxDocumentBytes?: number;
  /** Called after each chunk of a streamed file: the offset reached and the bytes of it still held. */
  readonly onChunk?: (path: string, bytesRead: number, heldBytes: number) => void;
  /**
   * The importing machine, recorded on every row of an event that names none (see
   * machine.ts); unset: '' (unknown). The import state is kept per machine (its device id).
   */
  readonly machine?: Machine;
  /**
   * Whether the files read are recorded as read (default: always). The command line records
   * nothing when its answer is a refusal (verdict.ts): the next run reads the same files again
   * and gives the same answer, instead of finding them unchanged.
   */
  readonly recordIf?: (reading: ImportReading) => boolean;
  /**
   * The files may still grow (`watch`): a parser that can tell keeps back the events at a
   * file's end that its next lines may still change (a call without its result, a response
   * still streamed), so they are written once, as a read of the whole file writes them.
   */
  readonly holdTail?: boolean;
  /** Files read even when unchanged since the state's record, to the end (events kept back are handed out). */
  readonly release?: ReadonlySet<string>;
  /**
   * The last read's ImportReading.handedOut: an event it handed out is not handed out again
   * while it is the same (counted as already imported); one that changed is.
   */
  readonly handedOut?: ReadonlyMap<string, ReadonlySet<string>>;
}

/** Bytes of a refused document kept in its dead letter: enough to recognise the file. */
const REFUSED_DOCUMENT_PREFIX_BYTES = 4096;

/** The longest an import reads files without letting the event loop run (see readImport). */
const LOOP_TURN_MS = 50;

/**
 * An import's batches: at most 8 MiB of events (the pipeline's default is 32 MiB). A harness log's
 * events are large (a Codex rollout's ~3 KB each), so the byte bound is the one reached; each
 * batch in flight is held several times (its lines, its encoded blocks, the engine's copy).
 * `import codex` of 0.5 GB (bench/import-scale.ts's corpus): peak anonymous RSS 391 -> 296 MB,
 * the time unchanged (24.3-26.2 s against 24.8 s). Replay keeps 32 MiB: its small events from
 * many sessions make more, smaller batches cost it 10-20 % (each batch reads the derivations'
 * state once).
 */
export const IMPORT_BATCH: BatchLimits = { batchMaxRows: 20_000, batchMaxBytes: 8 * 1024 * 1024 };

/** The import state kept in the database itself (import_files), per machine. */
export function databaseImportState(sink: ImportStates, deviceId: string): ImportStateStore {
  return {
    load: (importer) => sink.loadImportState(importer, deviceId),
    save: (importer, files, importedAt) => sink.writeImportState(importer, files, importedAt, deviceId),
  };
}

/** Imports into the database: every event through the pipeline (validate, project, account, store). */
export async function runImport(importer: Importer, paths: readonly string[], sink: Sink & ImportStates, options: ImportOptions = {}): Promise<ImportSummary> {
  const counts = emptyCounts();
  const writer = new BatchWriter(sink, counts, options.batch ?? IMPORT_BATCH, options.accounting);
  const machine = options.machine ?? UNKNOWN_MACHINE;
  const baseLimits = options.limits ?? DEFAULT_LIMITS;
  // Events that name no machine get the importing one (the decoder's fallback).
  const limits: DecodeLimits = { ...baseLimits, machine };
  const ingestedAt = nowClickHouseTime();
  const target = writerTarget(writer, ingestedAt, limits);
  const reading = await readImport(importer, paths, databaseImportState(sink, machine.device_id), target, { ...options, ingestedAt });
  counts.bytesRead = reading.bytesParsed;
  return { ...reading, counts };
}

/**
 * Reads the importer's files that are new or grew since the state's records, hands each new
 * event and malformed record to the target in file order, and records the files read once the
 * target acknowledged everything (a run cut short records nothing, and is read again).
 */
export async function readImport(
  importer: Importer,
  paths: readonly string[],
  state: ImportStateStore,
  target: ImportTarget,
  options: ImportOptions & { readonly ingestedAt?: string } = {},
): Promise<ImportReading> {
  const files = importer.listFiles(paths);
  const previous = await state.load(importer.id);
  const ingestedAt = options.ingestedAt ?? nowClickHouseTime();
  const skipped: Record<string, number> = {};
  const done = new Map<string, ImportFileState>();
  const held = new Map<string, number>();
  const unterminated = new Set<string>();
  const handedOut = new Map<string, Set<string>>();
  let filesRead = 0;
  let filesUnchanged = 0;
  let recordsRead = 0;
  let eventsEmitted = 0;
  let eventsAlreadyImported = 0;
  let malformedRecords = 0;
  let bytesParsed = 0;
  // Size and mtime only: a whole fs.Stats per file was ~1 KB each held for the run (100k files: ~100 MB).
  const stats = files.map((f) => {
    const { size, mtimeMs } = statSync(f);
    return { path: f, stat: { size, mtimeMs } };
  });
  const bytesTotal = stats.reduce((n, s) => n + s.stat.size, 0);
  let bytesDone = 0;
  let lastTurn = performance.now();

  // The files' new events and malformed records in file order: the source the drive loop reads.
  const source: RecordSource<TypedEvent, string> = {
    read: async (take: RecordTake<TypedEvent, string>): Promise<void> => {
      for (const [index, { path, stat }] of stats.entries()) {
        const before = previous.get(path);
        bytesDone += stat.size;
        const releasing = options.release?.has(path) === true;
        if (before && before.sizeBytes === stat.size && before.mtimeMs === stat.mtimeMs && !releasing) {
          filesUnchanged++;
          options.onProgress?.(index + 1, stats.length, bytesDone, bytesTotal);
          continue;
        }
        // A file that shrank was replaced: read it from the start.
        const from = before && stat.size >= before.completeBytes ? before.completeBytes : 0;
        filesRead++;
        const writeMalformed = async (m: MalformedRecord): Promise<void> => {
          if (m.endOffset <= from) return;
          malformedRecords++;
          const raw = typeof m.raw === 'string' ? Buffer.from(m.raw, 'utf8') : Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength);
          const wait = take.malformed(raw, `${m.problem}: ${m.detail}`, `${path}:${m.line}`);
          if (wait) await wait;
        };
        const handedBefore = options.handedOut?.get(path);
        // With holdTail: the events handed out since the parser last held none (see below).
        const out: { endOffset: number; line: string }[] = [];
        const writeEvent = async (event: ImportedEvent): Promise<void> => {
          if (event.endOffset <= from || handedBefore?.has(event.envelope.text) === true) {
            eventsAlreadyImported++;
            return;
          }
          if (options.holdTail === true) out.push({ endOffset: event.endOffset, line: event.envelope.text });
          eventsEmitted++;
          const wait = take.event(event.envelope, event.source);
          if (wait) await wait;
        };
        const reading = importer.readingOf(path);
        let completeBytes: number;
        let heldFrom = Number.POSITIVE_INFINITY;
        let fileSkipped: Readonly<Record<string, number>>;
        if (reading.kind === 'lines') {
          const { scan } = reading.reading;
          // What the parser completes while it reads a line is written before the next line is
          // read: a queue of one line's output, drained (and flushed when a batch is due) in order.
          const ready: ({ event: ImportedEvent } | { malformed: MalformedRecord })[] = [];
          const live = options.holdTail === true && !releasing ? { settledBefore: from } : undefined;
          // Made once the first pass (if any) is done: a parser reads what that pass found.
          let parser: LineParser | undefined;
          const drain = async (): Promise<void> => {
            for (const r of ready) {
              if ('event' in r) await writeEvent(r.event);
              else await writeMalformed(r.malformed);
            }
            ready.length = 0;
          };
          const second = (): ((line: RawLine) => Promise<void> | undefined) => {
            const p = reading.reading.parser({ event: (event) => ready.push({ event }), malformed: (malformed) => ready.push({ malformed }) }, live);
            parser = p;
            return (line) => {
              recordsRead++;
              p.line(line);
              // Nothing held now: whatever the read holds at its end starts after this line, so
              // the events handed out so far end before the point it records (not kept for it).
              if (out.length > 0 && (p.heldEvents ?? 0) === 0) out.length = 0;
              return ready.length > 0 ? drain() : undefined;
            };
          };
          // Both passes read no further than the size seen now: lines appended meanwhile wait.
          const chunking = {
            limitBytes: stat.size,
            ...(options.chunkBytes === undefined ? {} : { chunkBytes: options.chunkBytes }),
            ...(options.onChunk ? { onChunk: (bytes: number, held: number) => options.onChunk?.(path, bytes, held) } : {}),
          };
          const read = await readLinePasses(path, scan, second, chunking);
          if (parser === undefined) throw new Error(`No parser was made for ${path}`);
          parser.end();
          await drain();
          if (parser.held !== undefined) {
            held.set(path, parser.held.events);
            heldFrom = parser.held.fromOffset;
          }
          // A parser whose line holds several records (OTLP: an export) counts them itself.
          if (parser.recordsRead !== undefined) recordsRead += parser.recordsRead - read.lines;
          bytesParsed += read.bytesRead;
          completeBytes = read.completeBytes;
          fileSkipped = parser.skipped;
        } else {
          const maxBytes = options.maxDocumentBytes ?? reading.maxBytes;
          let parsed: ParsedFile;
          if (maxBytes !== undefined && stat.size > maxBytes) parsed = await refusedDocument(path, stat.size, maxBytes);
          else {
            const data = await readWhole(path, stat.size);
            bytesParsed += data.length;
            parsed = importer.parseFile(path, data);
          }
          recordsRead += parsed.recordsRead;
          for (const m of parsed.malformed ?? []) await writeMalformed(m);
          for (const event of parsed.events) await writeEvent(event);
          completeBytes = parsed.completeBytes;
          fileSkipped = parsed.skipped;
        }
        for (const [type, n] of Object.entries(fileSkipped)) skipped[type] = (skipped[type] ?? 0) + n;
        if (completeBytes < stat.size) unterminated.add(path);
        // Events kept back are read again by the next run: it starts before them.
        const recorded = Math.max(from, Math.min(completeBytes, heldFrom));
        done.set(path, { sizeBytes: stat.size, mtimeMs: stat.mtimeMs, completeBytes: recorded });
        if (options.holdTail === true) handedOut.set(path, new Set(out.filter((e) => e.endOffset > recorded).map((e) => e.line)));
        options.onProgress?.(index + 1, stats.length, bytesDone, bytesTotal);
        // Small files are read synchronously: the event loop gets a turn at least every LOOP_TURN_MS
        // (a signal's handler, the engine's answers), even when no batch comes due for long.
        if (performance.now() - lastTurn >= LOOP_TURN_MS) {
          await yieldToLoop();
          lastTurn = performance.now();
        }
      }
    },
  };
  await drive(source, target);
  const result: ImportReading = { filesSeen: files.length, filesRead, filesUnchanged, recordsRead, eventsEmitted, eventsAlreadyImported, malformedRecords, skippedRecords: skipped, bytesParsed, unterminated, ...(options.holdTail === true ? { held, handedOut } : {}) };
  // Recorded only after every event of these files is acknowledged: a crash before this point
  // re-imports them, and the deterministic event ids make that harmless. A refused run records
  // nothing (recordIf), so that it is refused again the next time.
  if (done.size && (options.recordIf?.(result) ?? true)) await state.save(importer.id, done, ingestedAt);
  return result;
}

/**
 * A document's bytes: a small one read synchronously (as a line format's small file is, see
 * stream.ts readLinePasses: asynchronous reads wait for libuv's pool, which the engine holds).
 */
async function readWhole(path: string, size: number): Promise<Buffer> {
  // (Of size 0 the usual way: a named pipe must not block the process.)
  if (size > 0 && size <= READ_ONCE_MAX_BYTES) return readFileSync(path);
  const handle = await open(path, 'r');
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * A whole-document file over its format's size limit: not parsed (its text and tree would be
 * held at once), but one malformed record with the file's first bytes, so the refusal is a
 * dead letter that says why and where, and the file is recorded as read.
 */
async function refusedDocument(path: string, sizeBytes: number, maxBytes: number): Promise<ParsedFile> {
  const handle = await open(path, 'r');
  let prefix: Buffer;
  try {
    const buffer = Buffer.alloc(Math.min(REFUSED_DOCUMENT_PREFIX_BYTES, sizeBytes));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    prefix = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  const detail = `The file is ${sizeBytes} bytes, over the limit of ${maxBytes} bytes for a whole-document format: it was not read (the dead letter keeps its first ${prefix.length} bytes).`;
  return { events: [], malformed: [{ raw: prefix, line: 1, problem: 'document_too_large', detail, endOffset: sizeBytes }], completeBytes: sizeBytes, recordsRead: 1, skipped: {} };
}
