// The database a command that only reads (report, query, export) uses: it must exist already,
// and is never created. A missing one is said in one line naming where it was looked for.
// An embedded data directory that another process owns (`toolcanon serve`, `watch`:
// src/serve/owner.ts) is read, and written, through that process, with its token.
import { describeTarget, resolveSinkTarget } from '../sink/target.ts';
import { holdsDatabase } from '../sink/datadir.ts';
import { findOwner, forgetServerCredentials, type FoundOwner } from '../serve/find.ts';

/** A command that reads a database found none (exit 1): nothing was created. */
export class NoDatabaseError extends Error {
  override readonly name = 'NoDatabaseError';
}

type DatabaseFlags = { readonly db?: string | undefined; readonly clickhouse?: string | undefined };

/**
 * Where a command's sink goes: the flags as given, or, when they name an embedded data directory
 * that a live owner serves, the owner's proxy with its token as the password (the engine's lock
 * is the owner's; the token never reaches argv or stderr). `owner` says which process.
 */
export function sinkTarget(flags: DatabaseFlags): { db: string | undefined; clickhouseUrl: string | undefined; owner?: FoundOwner } {
  const plain = { db: flags.db, clickhouseUrl: flags.clickhouse };
  const target = resolveSinkTarget(plain);
  if (target.kind !== 'embedded') return plain;
  const owner = findOwner(target.dir);
  if (owner === undefined) return plain;
  forgetServerCredentials();
  const url = new URL(owner.url);
  url.username = 'default';
  url.password = owner.token;
  return { db: undefined, clickhouseUrl: url.toString(), owner };
}

/** How the line naming the database says that it is read through its owner. */
export function throughOwner(owner: FoundOwner): string {
  return `, through process ${owner.pid} (${owner.command}) at ${owner.url}`;
}

/**
 * The target of a reading command, refused when it is an embedded data directory that holds no
 * database (missing, or a folder without the engine's tables). A server's missing database is
 * refused when the sink opens (createDatabase: false). Returns the line that names it.
 */
export function existingDatabase(flags: DatabaseFlags): string {
  const target = resolveSinkTarget({ db: flags.db, clickhouseUrl: flags.clickhouse });
  if (target.kind === 'embedded' && holdsDatabase(target.dir) === false) {
    throw new NoDatabaseError(`no database at ${target.dir}: run replay or import first (or give --db DIR, $TOOLCANON_DB, or --clickhouse URL)`);
  }
  const owner = target.kind === 'embedded' ? findOwner(target.dir) : undefined;
  return `database: ${describeTarget(target)}${owner === undefined ? '' : throughOwner(owner)}`;
}
