// Runs an importer into the sink through the same pipeline as replay (validate -> project ->
// account -> sink). Incremental: unchanged files are skipped; a grown file is re-parsed (joins
// and deduplication need its whole content) but only events completed by its new bytes are
// written; the truncated tail of a file being written is left for the next import.
import { statSync, readFileSync } from 'node:fs';
import { deadLetter, nowClickHouseTime, DEFAULT_LIMITS, type DecodeLimits } from '../decode/event.ts';
import { BatchWriter, emptyCounts, type PipelineCounts } from '../pipeline.ts';
import type { AccountingConfig } from '../accounting/session.ts';
import type { ClickHouseSink, ImportFileState } from '../sink/clickhouse.ts';
import type { Importer } from './types.ts';

export interface ImportSummary {
  readonly counts: PipelineCounts;
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
}

export interface ImportOptions {
  readonly limits?: DecodeLimits;
  readonly accounting?: AccountingConfig;
  /** Called as files are parsed: (files done, files total, bytes done, bytes total). */
  readonly onProgress?: (filesDone: number, filesTotal: number, bytesDone: number, bytesTotal: number) => void;
}

export async function runImport(importer: Importer, paths: readonly string[], sink: ClickHouseSink, options: ImportOptions = {}): Promise<ImportSummary> {
  const files = importer.listFiles(paths);
  const previous = await sink.loadImportState(importer.id);
  const counts = emptyCounts();
  const writer = new BatchWriter(sink, counts, undefined, options.accounting);
  const limits = options.limits ?? DEFAULT_LIMITS;
  const ingestedAt = nowClickHouseTime();
  const skipped: Record<string, number> = {};
  const done = new Map<string, ImportFileState>();
  let filesRead = 0;
  let filesUnchanged = 0;
  let recordsRead = 0;
  let eventsEmitted = 0;
  let eventsAlreadyImported = 0;
  let malformedRecords = 0;
  let bytesParsed = 0;
  const stats = files.map((f) => ({ path: f, stat: statSync(f) }));
  const bytesTotal = stats.reduce((n, s) => n + s.stat.size, 0);
  let bytesDone = 0;

  for (const [index, { path, stat }] of stats.entries()) {
    const before = previous.get(path);
    bytesDone += stat.size;
    if (before && before.sizeBytes === stat.size && before.mtimeMs === stat.mtimeMs) {
      filesUnchanged++;
      options.onProgress?.(index + 1, stats.length, bytesDone, bytesTotal);
      continue;
    }
    // A file that shrank was replaced: read it from the start.
    const from = before && stat.size >= before.completeBytes ? before.completeBytes : 0;
    const data = readFileSync(path);
    const parsed = importer.parseFile(path, data);
    filesRead++;
    bytesParsed += data.length;
    recordsRead += parsed.recordsRead;
    for (const [type, n] of Object.entries(parsed.skipped)) skipped[type] = (skipped[type] ?? 0) + n;
    for (const m of parsed.malformed ?? []) {
      if (m.endOffset <= from) continue;
      malformedRecords++;
      const raw = typeof m.raw === 'string' ? Buffer.from(m.raw, 'utf8') : m.raw;
      if (writer.addDeadLetter(deadLetter(raw, 'import_malformed', `${m.problem}: ${m.detail}`, `${path}:${m.line}`, ingestedAt, limits.redact !== false))) await writer.flush();
    }
    for (const event of parsed.events) {
      if (event.endOffset <= from) {
        eventsAlreadyImported++;
        continue;
      }
      eventsEmitted++;
      if (writer.add({ bytes: Buffer.from(event.line, 'utf8'), source: event.source }, ingestedAt, limits)) await writer.flush();
    }
    done.set(path, { sizeBytes: stat.size, mtimeMs: stat.mtimeMs, completeBytes: parsed.completeBytes });
    options.onProgress?.(index + 1, stats.length, bytesDone, bytesTotal);
  }
  await writer.flush();
  // Recorded only after every event of these files is acknowledged: a crash before this point
  // re-imports them, and the deterministic event ids make that harmless.
  if (done.size) await sink.writeImportState(importer.id, done, ingestedAt);
  counts.bytesRead = bytesParsed;
  return { counts, filesSeen: files.length, filesRead, filesUnchanged, recordsRead, eventsEmitted, eventsAlreadyImported, malformedRecords, skippedRecords: skipped, bytesParsed };
}
