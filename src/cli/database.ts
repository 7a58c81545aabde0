// The database a command that only reads (report, query, export) uses: it must exist already,
// and is never created. A missing one is said in one line naming where it was looked for.
import { describeTarget, resolveSinkTarget } from '../sink/clickhouse.ts';
import { holdsDatabase } from '../sink/datadir.ts';

/** A command that reads a database found none (exit 1): nothing was created. */
export class NoDatabaseError extends Error {
  override readonly name = 'NoDatabaseError';
}

/**
 * The target of a reading command, refused when it is an embedded data directory that holds no
 * database (missing, or a folder without the engine's tables). A server's missing database is
 * refused when the sink opens (createDatabase: false). Returns the line that names it.
 */
export function existingDatabase(flags: { readonly db?: string | undefined; readonly clickhouse?: string | undefined }): string {
  const target = resolveSinkTarget({ db: flags.db, clickhouseUrl: flags.clickhouse });
  if (target.kind === 'embedded' && holdsDatabase(target.dir) === false) {
    throw new NoDatabaseError(`no database at ${target.dir}: run replay or import first (or give --db DIR, $TOOLCANON_DB, or --clickhouse URL)`);
  }
  return `database: ${describeTarget(target)}`;
}
