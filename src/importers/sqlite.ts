// Reads SQLite tables for the importers of harnesses that keep their logs in a SQLite database
// (Goose). Node 20 has no node:sqlite: the rows are read through chdb's `sqlite(path, table)`
// table function, in the process's embedded engine (chdb's standalone query, or — when an
// embedded sink holds the process's one data directory — a second session on that same
// directory, as chdb allows). The importer is handed the file's bytes: they are written to a
// private temporary copy (with the live `-wal` beside the original, when there is one, so what
// SQLite has not checkpointed yet is read too), and the copy is what the engine opens. Reading is
// synchronous, as parseFile is.
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The first 16 bytes of every SQLite 3 database file. */
export const SQLITE_MAGIC = Buffer.from('SQLite format 3\u0000', 'latin1');

export function isSqlite(data: Buffer): boolean {
  return data.length >= 100 && data.subarray(0, 16).equals(SQLITE_MAGIC);
}

interface Chdb {
  query(sql: string, format?: string): string;
  Session: new (path?: string) => { query(sql: string, format?: string): string; close?(): void; cleanup?(): void };
}

let chdb: Chdb | undefined;
function engine(): Chdb {
  // Loaded only when a database is read: it maps a large library a JSONL import never needs.
  chdb ??= createRequire(import.meta.url)('chdb') as Chdb;
  return chdb;
}

const ACTIVE_SESSION = /a session \(path='(.*)'\) is active/;

/** Runs a query on the process's engine: standalone, or on the directory of the session that holds it. */
function run(sql: string): string {
  const c = engine();
  try {
    return c.query(sql, 'JSONEachRow');
  } catch (error) {
    const active = ACTIVE_SESSION.exec(String(error));
    if (!active?.[1]) throw error;
    const session = new c.Session(active[1]);
    try {
      return session.query(sql, 'JSONEachRow');
    } finally {
      session.close?.();
    }
  }
}

function literal(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

export type Row = Record<string, unknown>;

/** A database's tables as rows, read from a private copy of its bytes. */
export class SqliteCopy {
  private readonly dir: string;
  private readonly file: string;

  constructor(data: Buffer, originalPath?: string) {
    this.dir = mkdtempSync(join(tmpdir(), 'toolcanon-sqlite-'));
    this.file = join(this.dir, 'db.sqlite');
    writeFileSync(this.file, data);
    const wal = originalPath === undefined ? undefined : `${originalPath}-wal`;
    if (wal !== undefined && existsSync(wal)) copyFileSync(wal, `${this.file}-wal`);
  }

  /** The names of the database's tables. */
  tables(): Set<string> {
    return new Set(this.rows('sqlite_master').filter((r) => r['type'] === 'table').map((r) => String(r['name'])));
  }

  /** Every row of a table (an SQL NULL as null), in the engine's read order. */
  rows(table: string): Row[] {
    const text = run(`SELECT * FROM sqlite(${literal(this.file)}, ${literal(table)}) SETTINGS output_format_json_quote_64bit_integers = 0`);
    return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Row);
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
