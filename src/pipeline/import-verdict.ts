// What an import says of what it read: whether the files looked like the harness's logs. The
// answer must be the same on every run over the same files, so it is judged on everything the
// importer knows of them (what it read now and the files recorded as read before), and a run
// whose answer is a refusal records nothing (readImport's `recordIf`): the next run reads the
// same files again and refuses them again, where it used to find them "unchanged" and exit 0.
import type { ImportReading } from './import.ts';
import type { Importer } from '../importers/types.ts';

/**
 * Whether the importer found anything of its harness in the files it was given: an event read
 * now (new, or already imported from a file that grew), or a file recorded as read by an earlier
 * run (only an accepted run records its files, so such a file held the harness's events, or the
 * user accepted it with --allow-dead-letters).
 */
export function harnessFound(r: ImportReading): boolean {
  return r.eventsEmitted + r.eventsAlreadyImported > 0 || r.filesUnchanged > 0;
}

export interface VerdictOptions {
  /** `import all` passes false: a harness's folder with no log file in it is not a failure there. */
  readonly requireFiles?: boolean;
  /** Judge the share of malformed records too (the local import; `--to-kafka` does not). */
  readonly malformed?: boolean;
}

/**
 * Why the import refuses what it read (one line, without the `toolcanon: ` prefix), or
 * undefined when it looks like the harness's logs: records but nothing of the harness, no log
 * file at all, or more malformed records than events.
 */
export function importProblem(importer: Pick<Importer, 'id' | 'description'>, targets: readonly string[], r: ImportReading, o: VerdictOptions = {}): string | undefined {
  const which = importer.id;
  if (r.recordsRead > 0 && !harnessFound(r)) {
    return `import ${which} read ${r.filesRead} file(s) with ${r.recordsRead} record(s) and found no ${which} tool call or usage in them: expected ${importer.description}; are these another harness's logs? (--allow-dead-letters accepts this)`;
  }
  if (r.filesSeen === 0 && o.requireFiles !== false) {
    return `import ${which} found no ${which} log files under ${targets.join(', ')}: expected ${importer.description} (--allow-dead-letters accepts this)`;
  }
  const events = r.eventsEmitted + r.eventsAlreadyImported;
  if (o.malformed !== false && r.malformedRecords > events) {
    return `import ${which}: ${r.malformedRecords} malformed record(s) against ${events} event(s): are these ${which} logs? (dead letters kept; --allow-dead-letters accepts this)`;
  }
  return undefined;
}
