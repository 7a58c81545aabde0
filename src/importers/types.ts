// The importer contract: one adapter per harness log format (same file roles in each:
// README.md, paths.ts, parser.ts, types.ts, index.ts), turning the logs a harness already
// writes into toolcanon envelope events that the pipeline validates, projects and accounts.
import type { Harness } from '../canonical/meta.ts';
import type { Envelope } from './envelope.ts';
import type { RawLine } from './lines.ts';

/** The closed list of importers; adding one is a compile error until every switch handles it. */
export const IMPORTER_IDS = ['claude-code', 'codex', 'opencode', 'otlp', 'acp', 'gemini-cli', 'qwen-code', 'copilot-cli', 'pi-agent', 'openclaw', 'cline', 'roo-code', 'kilo-code', 'kimi', 'amp', 'droid', 'goose', 'hermes-agent', 'aider', 'codebuff'] as const;
export type ImporterId = (typeof IMPORTER_IDS)[number];

export interface ImportedEvent {
  /** One toolcanon.event/v1 event (tool_call or usage), typed, with a deterministic event_id; `envelope.text` is its line. */
  readonly envelope: Envelope;
  /** Where the raw record came from: `file:line` (of the record that completed the event). */
  readonly source: string;
  /**
   * Byte offset just past the last raw line that contributed to the event. An incremental
   * import of a grown file emits only events whose endOffset passes the previous import's end.
   */
  readonly endOffset: number;
}

/**
 * A raw record the importer could not read (invalid JSON, a required field missing or of the
 * wrong type): it becomes a dead letter with its bytes and `file:line`, never a bare counter.
 * Records skipped on purpose (types that carry no tool call or usage) stay counters in `skipped`.
 */
export interface MalformedRecord {
  /** The record's bytes as read (a line of a JSONL file, or the JSON text of an object). */
  readonly raw: string | Uint8Array;
  /** 1-based line of the file where the record starts. */
  readonly line: number;
  /** What was wrong, as a short key (`invalid_json`, `malformed_assistant`, `tool:no_time`, …). */
  readonly problem: string;
  /** One sentence naming the field and what was found. */
  readonly detail: string;
  /** Byte offset just past the record, as for events (an incremental import skips older ones). */
  readonly endOffset: number;
}

export interface ParsedFile {
  readonly events: ImportedEvent[];
  /** Records that could not be read: each is written as a dead letter `import_malformed`. */
  readonly malformed?: readonly MalformedRecord[];
  /** Bytes up to the end of the last complete line: a truncated last line is left for later. */
  readonly completeBytes: number;
  /** Raw records read (complete lines, or objects for non-line formats). */
  readonly recordsRead: number;
  /** Records of types the importer does not turn into events, counted per type. */
  readonly skipped: Readonly<Record<string, number>>;
}

/** Where a streaming parser hands what it completes, as soon as it is complete. */
export interface ImportOutput {
  event(event: ImportedEvent): void;
  malformed(record: MalformedRecord): void;
}

/**
 * A per-file, stateful parser of complete lines: the runner feeds it the lines as it reads the
 * file in chunks, and it hands each event or malformed record to the output once nothing later
 * in the file can change it, keeping only what is still pending (unjoined calls, responses that
 * may still be written again). What it holds is bounded by that pending state, not by the file.
 */
export interface LineParser {
  /** Reads one complete, non-blank line (offsets and rules as in lines.ts). */
  line(line: RawLine): void;
  /** After the last complete line: hands out everything still held (made `live`: what is settled). */
  end(): void;
  /**
   * After `end()` of a parser made `live`: the number of events kept back, and an offset before
   * the end of every line that completes one (a reader resuming there hands them out again).
   */
  readonly held?: { readonly events: number; readonly fromOffset: number } | undefined;
  /**
   * Events started and not yet handed out, for a parser that holds some (undefined: it holds
   * none past the line it read).
   */
  readonly heldEvents?: number;
  /** Records of types the importer does not turn into events, counted per type (final after end). */
  readonly skipped: Readonly<Record<string, number>>;
  /**
   * Raw records read, when a line holds several (an OTLP export: its spans and log records);
   * undefined: one per line (final after end).
   */
  readonly recordsRead?: number;
}

/** How one file of a line format is read: an optional first pass, then the parser. */
export interface LineReading {
  /**
   * A first pass over the same complete lines, for a parser that must know what comes later
   * in the file to emit a record early and still give exactly what a whole-file parse gives
   * (the importer's parser says what it records and why). Undefined: one pass.
   */
  readonly scan?: (line: RawLine) => void;
  /**
   * The parser of the (second) pass; called after every line went through `scan`. `live`: the
   * file may still grow (`watch`): a parser that can tell keeps back the events its next lines
   * may still change (a call without its result, a response whose streamed copies may go on)
   * and every event after them in its order, unless they end before `settledBefore` (handed
   * out by an earlier run), and says what it kept in `held`.
   */
  parser(output: ImportOutput, live?: { readonly settledBefore: number }): LineParser;
}

/**
 * How the runner reads a file: `lines` streams it in chunks through a LineParser; `document`
 * is a format whose file is one JSON document, read whole
 * by `parseFile`, refused above `maxBytes` when that is set (a dead letter, not a crash).
 */
export type FileReading =
  | { readonly kind: 'lines'; readonly reading: LineReading }
  | { readonly kind: 'document'; readonly maxBytes?: number };

/** Largest file a whole-document format reads (its JSON text and parsed tree are held at once). */
export const MAX_DOCUMENT_BYTES = 128 * 1024 * 1024;

export interface Importer {
  readonly id: ImporterId;
  /**
   * The harness values its events name (SPEC §1: each has its usage convention, accounting/
   * conventions.ts); an importer that reads the harness from the data names every value
   * (test/importers/harnesses.test.ts holds every event of the samples to it).
   */
  readonly harnesses: readonly Harness[];
  /**
   * Its sample logs, read by the tests that loop over the registry (contract, harnesses, golden,
   * typed decoding): fixture folders in this repository (paths from its root), and folders of the
   * shared corpus of real logs (paths inside it; test/helpers/corpus.ts finds it). A folder
   * test/importers/fixtures-* that no importer names fails test/importers/harnesses.test.ts.
   */
  readonly samples: { readonly fixtures: readonly string[]; readonly corpus: readonly string[] };
  /** One line for --help. */
  readonly description: string;
  /** Where the harness keeps its logs, when the user names no path (already expanded). */
  defaultPaths(): string[];
  /** The files under `paths` this importer reads, sorted; a path may also name a file. */
  listFiles(paths: readonly string[]): string[];
  /**
   * Parses a whole file. Never throws on bad records: one that cannot be read is returned in
   * `malformed`, one skipped on purpose is counted in `skipped`.
   */
  parseFile(path: string, data: Buffer): ParsedFile;
  /** How the runner reads `path`: streamed line by line, or as one document (see FileReading). */
  readingOf(path: string): FileReading;
}
