// What a rerun finds already stored: after a replay or import was killed, ran out of disk or
// lost its server, running it again reads everything again and writes only what is not stored
// yet (or a more complete copy of it), and its summary says how much of the input was there before.
import type { Importer } from '../importers/types.ts';
import type { ClickHouseSink } from '../sink/clickhouse.ts';
import type { Row } from './format.ts';

/** Events of these replay inputs stored before this run (stdin is not counted: it has no name). */
export function storedBeforeReplay(sink: ClickHouseSink, paths: readonly string[]): Promise<number> {
  return sink.countStoredFromFiles(paths.filter((p) => p !== '-'));
}

/**
 * Events stored from the files an import will read in full again: the ones it has no record of
 * (a run cut short records nothing of the files it was reading). Files it has a record of are
 * skipped or read from where it stopped (events_already_imported).
 */
export async function storedBeforeImport(sink: ClickHouseSink, importer: Importer, targets: readonly string[], deviceId = ''): Promise<number> {
  const recorded = await sink.loadImportState(importer.id, deviceId);
  return sink.countStoredFromFiles(importer.listFiles(targets).filter((f) => !recorded.has(f)));
}

/** The summary rows with `events_already_stored` after the row named `after`. */
export function withAlreadyStored(rows: Row[], stored: number, after: string): Row[] {
  const at = rows.findIndex((r) => r['metric'] === after);
  const out = [...rows];
  out.splice(at < 0 ? out.length : at + 1, 0, { metric: 'events_already_stored', value: stored });
  return out;
}

/**
 * The line a rerun prints when some of its input was stored before (undefined when none was): how
 * many of the events read were there already (not written again: a table keeps one copy of an
 * event, and a copy no more complete than the stored one is not written) and how many are new.
 */
export function alreadyStoredLine(stored: number, eventsRead: number): string | undefined {
  if (stored === 0) return undefined;
  if (eventsRead === 0) return `already stored: ${stored} event(s) of these files from an earlier run; none read in this run`;
  const known = Math.min(stored, eventsRead);
  const fresh = eventsRead - known;
  if (fresh === 0) return `already stored: ${known} of the ${eventsRead} event(s) read (by an earlier run), nothing new`;
  return `already stored: ${known} of the ${eventsRead} event(s) read (by an earlier run, not written again); new: ${fresh}`;
}
