// The rows of a report kept in the embedded data directory beside the engine's tables, with a
// stamp of the directory's table folders: the same report asked again (same report, grouping,
// format, scope, price table, code) on a directory whose stamp has not changed is answered from
// them, without starting the engine, which is most of such a process's time (the engine's
// library and its session ~0.15-0.2 s, its queries and close ~0.1 s, on this project's 2-core
// machines; see docs/performance.md). Any other case takes the usual way and keeps its rows.
//
// The stamp is every table folder's entries (store/*/*: its parts and files by name, inode and
// times, and each file's size, the tables' definitions included) and metadata/'s links. A
// table's rows only change through its parts: an insert, a merge, a mutation (DELETE, UPDATE),
// a TTL, a TRUNCATE or a DETACH adds, renames or removes a part, and an ALTER rewrites its
// definition. So an unchanged stamp means unchanged rows. Folders being written (tmp_insert_…,
// tmp_merge_…) are entries too: a stamp taken while anything is written never matches one taken
// after. `toolcanon query` and `serve`, which run SQL they did not write, remove the rows kept
// before they start the engine. TOOLCANON_REPORT_CACHE=0 turns the reuse off. `report html` is
// not kept: its page carries the time it was made. A replay or import into the directory makes
// the most recently asked reports again while its engine is open (keptKeys; src/cli/main.ts).
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The folder of the kept reports inside a data directory (the engine leaves unknown folders alone). */
export const REPORT_CACHE_DIR = 'report-cache';
const FORMAT = 1;
/** Reports kept at most per data directory: the least recently asked go first. */
export const REPORT_CACHE_ENTRIES = 16;

/** Whether reports are reused (TOOLCANON_REPORT_CACHE=0: never). */
export function reportCacheEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env['TOOLCANON_REPORT_CACHE'] !== '0';
}

/** Entries of a folder, sorted, each with what would change if it were rewritten; undefined when unreadable. */
function entries(dir: string): string[] | undefined {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return undefined;
  }
  const out: string[] = [];
  for (const name of names) {
    let s;
    try {
      s = lstatSync(join(dir, name), { bigint: true });
    } catch {
      return undefined; // removed while read: something is being written
    }
    // A part folder is written under a temporary name and renamed; a file (a table's definition,
    // format_version.txt, a mutation) may be rewritten in place or replaced. A part's name alone
    // could come back with other rows: a table's next block number is taken from its parts as
    // the engine starts, so a part dropped and a restart can give the next insert its name
    // again. The inode and the times (ns) of each entry tell those apart.
    const id = `${s.ino}:${s.mtimeNs}:${s.ctimeNs}`;
    if (s.isSymbolicLink()) out.push(`${name}->${readlinkSync(join(dir, name))}:${id}`);
    else if (s.isDirectory()) out.push(`${name}/:${id}`);
    else out.push(`${name}:${s.size}:${id}`);
  }
  return out;
}

/** The name of a folder's entry (entries()), undefined when it is not a folder. */
function folderName(entry: string): string | undefined {
  const slash = entry.indexOf('/:');
  return slash === -1 ? undefined : entry.slice(0, slash);
}

/**
 * The stamp of a data directory's tables (see the head of this file), as a hash; undefined when
 * the directory is not one the engine has written tables to (no store/ or metadata/).
 */
export function tablesStamp(dir: string): string | undefined {
  const hash = createHash('sha256');
  const metadata = entries(join(dir, 'metadata'));
  const store = entries(join(dir, 'store'));
  if (metadata === undefined || store === undefined) return undefined;
  hash.update(`metadata\n${metadata.join('\n')}\n`);
  for (const prefix of store) {
    const prefixName = folderName(prefix);
    if (prefixName === undefined) continue;
    const p = join(dir, 'store', prefixName);
    const tables = entries(p);
    if (tables === undefined) return undefined;
    for (const t of tables) {
      const tableName = folderName(t);
      if (tableName === undefined) continue;
      const table = entries(join(p, tableName));
      if (table === undefined) return undefined;
      hash.update(`${prefix}${t}\n${table.join('\n')}\n`);
    }
  }
  return hash.digest('hex');
}

/** What a kept report is for: everything its rows depend on besides the tables. */
export interface ReportCacheKey {
  readonly report: string;
  readonly by: string | undefined;
  /** The output format (a report may query differently for one: discovery's two tables). */
  readonly format: string;
  readonly scope: Readonly<Record<string, string | undefined>>;
  /** The price table given with --prices: its text (the shipped table is part of the code). */
  readonly prices: string | undefined;
  /** The code that computed the rows (its build). */
  readonly code: string;
}

/** The file of a key (the same for the key as JSON gives it back: a scope flag not given is no member). */
function keyFile(dir: string, key: ReportCacheKey): string {
  const digest = createHash('sha256').update(JSON.stringify([FORMAT, key.report, key.by ?? null, key.format, Object.entries(key.scope).filter(([, v]) => v !== undefined).sort(), key.prices ?? null, key.code])).digest('hex');
  return join(dir, REPORT_CACHE_DIR, `${digest.slice(0, 32)}.json`);
}

/** A value that JSON gives back as it was: strings, finite numbers, booleans, null, arrays and plain objects of them. */
export function jsonExact(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (Array.isArray(value)) return value.every(jsonExact);
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const v of Object.values(value as Record<string, unknown>)) if (!jsonExact(v)) return false;
    return true;
  }
  return false;
}

/** The rows kept for this key when the directory's tables are as they were then; undefined otherwise. */
export function readReportCache(dir: string, key: ReportCacheKey): unknown {
  const stamp = tablesStamp(dir);
  if (stamp === undefined) return undefined;
  const file = keyFile(dir, key);
  let kept: { format?: unknown; stamp?: unknown; rows?: unknown };
  try {
    kept = JSON.parse(readFileSync(file, 'utf8')) as typeof kept;
  } catch {
    return undefined;
  }
  if (kept.format !== FORMAT || kept.stamp !== stamp) return undefined;
  try {
    // Its time says when it was last asked: a write makes the most recent ones again (keptKeys).
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // a read-only directory: still answered
  }
  return kept.rows;
}

/**
 * The keys of the reports kept in a directory by this code, the most recently asked (or made)
 * first, at most `max`: what a write into the directory makes again while its engine is open.
 */
export function keptKeys(dir: string, code: string, max: number): ReportCacheKey[] {
  let files: string[];
  try {
    files = keptFiles(join(dir, REPORT_CACHE_DIR));
  } catch {
    return [];
  }
  const keys: ReportCacheKey[] = [];
  for (const f of files) {
    if (keys.length >= max) break;
    try {
      const kept = JSON.parse(readFileSync(f, 'utf8')) as { format?: unknown; key?: ReportCacheKey };
      if (kept.format === FORMAT && kept.key?.code === code) keys.push(kept.key);
    } catch {
      // being replaced, or damaged: not made again
    }
  }
  return keys;
}

/**
 * Keeps reports' rows with the stamp taken now (after the engine closed; one stamp for all):
 * rows JSON does not give back exactly are not kept. Never fails the command: a directory that
 * cannot take the files just keeps nothing.
 */
export function writeReportCache(dir: string, reports: readonly { readonly key: ReportCacheKey; readonly rows: unknown }[]): void {
  const exact = reports.filter((r) => jsonExact(r.rows));
  if (exact.length === 0) return;
  const stamp = tablesStamp(dir);
  if (stamp === undefined) return;
  const folder = join(dir, REPORT_CACHE_DIR);
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    for (const { key, rows } of exact) {
      const file = keyFile(dir, key);
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify({ format: FORMAT, stamp, key, rows }), { mode: 0o600 });
      renameSync(tmp, file);
    }
    // Keeps the REPORT_CACHE_ENTRIES most recently asked or written.
    for (const f of keptFiles(folder).slice(REPORT_CACHE_ENTRIES)) rmSync(f, { force: true });
  } catch {
    // a full disk or a read-only directory: the report was printed; nothing is kept
  }
}

/** The kept reports' files of a folder, the most recently asked or written first. */
function keptFiles(folder: string): string[] {
  return readdirSync(folder)
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ f: join(folder, f), t: statSync(join(folder, f)).mtimeMs }))
    .sort((a, b) => b.t - a.t)
    .map((e) => e.f);
}

/** Removes every kept report of a data directory. */
export function dropReportCache(dir: string): void {
  rmSync(join(dir, REPORT_CACHE_DIR), { recursive: true, force: true });
}
