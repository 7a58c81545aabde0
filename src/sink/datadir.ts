// The embedded engine's data directory: checked (and created) before the engine starts, so that
// what a user can fix (a file in the way, no write permission, another process using it) is one
// line that names the directory and says what to do, not the engine's own message; and failures
// of the engine while it runs (disk full, directory removed) described the same way.
import { accessSync, closeSync, constants, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { SinkError } from './errors.ts';
import { describeFsError, errorCode } from '../util/fs-error.ts';

/** A data directory the engine cannot use, said in one line: it needs a fix, waiting will not help. */
export class DataDirError extends SinkError {
  override readonly name = 'DataDirError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, false, options);
  }
}

const ANOTHER = 'use another --db (or $TOOLCANON_DB)';

function whoAmI(): string {
  const uid = process.getuid?.();
  return uid === undefined ? '' : ` for user ${uid}`;
}

/** Why an existing directory cannot be written, or undefined when it can. */
function notWritable(dir: string): string | undefined {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (error) {
    return errorCode(error) === 'EROFS' ? 'is on a read-only file system' : `is not writable${whoAmI()} (permission denied)`;
  }
}

/**
 * Makes sure `dir` is a directory this process can write, creating it and any missing parents
 * (a first run creates `.toolcanon/db`). Throws a DataDirError otherwise: a file in the way, a
 * parent that cannot be written, a read-only directory or file system.
 */
export function prepareDataDir(dir: string): void {
  let stat;
  try {
    stat = statSync(dir);
  } catch (error) {
    if (errorCode(error) === 'ENOTDIR') {
      const file = firstFileAncestor(dir);
      throw new DataDirError(`cannot create the data directory ${dir}: ${file ?? 'a parent'} is a file, not a directory: ${ANOTHER}`, { cause: error });
    }
    if (errorCode(error) !== 'ENOENT') throw new DataDirError(`cannot use the data directory ${dir}: ${describeFsError(error)}: ${ANOTHER}`, { cause: error });
  }
  if (stat !== undefined) {
    if (!stat.isDirectory()) throw new DataDirError(`the data directory ${dir} is a file, not a directory: move the file away or ${ANOTHER}`);
    const why = notWritable(dir);
    if (why !== undefined) throw new DataDirError(`the data directory ${dir} ${why}: make it writable (chmod u+w, or chown it to this user) or ${ANOTHER}`);
    // The engine opens (and locks) this file first; a read-only copy of it fails the same way.
    const status = `${dir}/status`;
    try {
      accessSync(status, constants.W_OK);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw new DataDirError(`the data directory ${dir} is not writable${whoAmI()} (its file ${basename(status)}: ${describeFsError(error)}): make it writable (chmod -R u+w) or ${ANOTHER}`, { cause: error });
    }
    return;
  }
  // Missing: create it and its missing parents one level at a time (recursive mkdir loops
  // forever under /proc), so that a failure names the level that could not be created.
  const missing: string[] = [];
  let existing = dir;
  for (;;) {
    try {
      lstatSync(existing);
      break;
    } catch {
      missing.unshift(existing);
      const up = dirname(existing);
      if (up === existing) break;
      existing = up;
    }
  }
  const why = notWritable(existing);
  if (why !== undefined) {
    throw new DataDirError(`cannot create the data directory ${dir}: its parent ${existing} ${why}: create ${dir} with write permission for this user, or ${ANOTHER}`);
  }
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (error) {
      if (errorCode(error) === 'EEXIST') continue; // another process created it meanwhile
      throw new DataDirError(`cannot create the data directory ${dir}: mkdir ${level}: ${describeFsError(error)}: ${ANOTHER}`, { cause: error });
    }
  }
}

/**
 * Whether `dir` holds a database: true when it has the engine's `metadata/` folder (made at the
 * first DDL, so a directory a failed first run left empty holds none); false when the directory,
 * or that folder in it, does not exist. Undefined when that cannot be told (a file in the way, no
 * permission): opening the sink then says what is wrong with it. Creates nothing.
 */
export function holdsDatabase(dir: string): boolean | undefined {
  try {
    if (!statSync(dir).isDirectory()) return undefined;
  } catch (error) {
    return errorCode(error) === 'ENOENT' ? false : undefined;
  }
  try {
    return statSync(join(dir, 'metadata')).isDirectory() ? true : undefined;
  } catch (error) {
    return errorCode(error) === 'ENOENT' ? false : undefined;
  }
}

function firstFileAncestor(dir: string): string | undefined {
  for (let p = dirname(dir); p !== dirname(p); p = dirname(p)) {
    try {
      if (!statSync(p).isDirectory()) return p;
    } catch {
      // keep going up
    }
  }
  return undefined;
}

export interface LockHolder {
  readonly pid: number;
  /** What the process is, e.g. `toolcanon replay` (from /proc/<pid>/cmdline), when it can be read. */
  readonly command: string | undefined;
  /** When its engine started, from the directory's status file. */
  readonly since: string | undefined;
}

/** The engine's status file: written (and flock'ed) by the process whose engine holds the directory. */
function readStatusFile(dir: string): { pid: number | undefined; since: string | undefined } {
  try {
    const text = readFileSync(`${dir}/status`, 'utf8');
    const pid = /^PID:\s*([0-9]+)/m.exec(text)?.[1];
    const since = /^Started at:\s*(.+)$/m.exec(text)?.[1]?.trim();
    return { pid: pid === undefined ? undefined : Number(pid), since };
  } catch {
    return { pid: undefined, since: undefined };
  }
}

function commandOf(pid: number): string | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
    const at = argv.findIndex((a) => /(?:^|\/)toolcanon(?:\.mjs)?$/.test(a));
    if (at >= 0) return `toolcanon${argv[at + 1] !== undefined && /^[a-z-]+$/.test(argv[at + 1] as string) ? ` ${argv[at + 1]}` : ''}`;
    return argv[0] === undefined ? undefined : basename(argv[0]);
  } catch {
    return undefined;
  }
}

/**
 * Which process holds the directory's engine lock. On Linux /proc/locks says it (the engine
 * flocks `<dir>/status`): the pid of a lock on that file's inode; no lock there means nobody
 * holds it, whatever a stale status file says. Elsewhere: undefined (the engine's own error is
 * then described with the pid its status file names, see describeEngineFailure).
 */
export function lockHolder(dir: string): LockHolder | undefined {
  let locks: string;
  let status;
  try {
    status = statSync(`${dir}/status`);
    locks = readFileSync('/proc/locks', 'utf8');
  } catch {
    return undefined;
  }
  const major = (status.dev >> 8) & 0xfff;
  const minor = (status.dev & 0xff) | ((status.dev >> 12) & 0xfff00);
  for (const line of locks.split('\n')) {
    // "1: FLOCK  ADVISORY  WRITE 3619 fe:00:2305063 0 EOF" (a waiter's line has "->" and is skipped)
    const m = /^\d+:\s+(?:FLOCK|POSIX|OFDLCK)\s+\S+\s+\S+\s+(-?\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/.exec(line);
    if (!m) continue;
    if (Number(m[4]) !== status.ino || parseInt(m[2] as string, 16) !== major || parseInt(m[3] as string, 16) !== minor) continue;
    const pid = Number(m[1]);
    const since = readStatusFile(dir).since;
    return { pid, command: pid > 0 ? commandOf(pid) : undefined, since };
  }
  return undefined;
}

function busyMessage(dir: string, holder: LockHolder | undefined, fromStatusFile = false): string {
  const who =
    holder === undefined
      ? 'another process'
      : `process ${holder.pid}${holder.command || holder.since ? ` (${[holder.command, holder.since && `running since ${holder.since}`].filter(Boolean).join(', ')})` : ''}${fromStatusFile ? ', per its status file' : ''}`;
  return `the data directory ${dir} is in use by ${who}: the embedded engine allows one process per directory; wait for it to finish (or stop it), or ${ANOTHER}`;
}

/** Refuses a directory whose engine lock another process holds (checked before our engine starts). */
export function assertNotBusy(dir: string): void {
  const holder = lockHolder(dir);
  if (holder !== undefined && holder.pid !== process.pid) throw new DataDirError(busyMessage(dir, holder));
}

/**
 * The identity of a data directory (device and inode), and of its `metadata/` folder when it
 * has one: another directory at the same path differs. The engine creates the directories of
 * the next part it writes again when they are gone (the data directory and `store/` included),
 * so a removal it writes through keeps the top directory's inode while every file goes;
 * `metadata/` is written only by DDL, so it stays gone and tells.
 */
export interface DirIdentity {
  readonly dev: number;
  readonly ino: number;
  readonly metadata?: { readonly dev: number; readonly ino: number };
}

function inode(path: string): { dev: number; ino: number } | undefined {
  try {
    const s = statSync(path);
    return s.isDirectory() ? { dev: s.dev, ino: s.ino } : undefined;
  } catch {
    return undefined;
  }
}

export function dirIdentity(dir: string): DirIdentity | undefined {
  const top = inode(dir);
  if (top === undefined) return undefined;
  const metadata = inode(join(dir, 'metadata'));
  return metadata === undefined ? top : { ...top, metadata };
}

/** `opened` with the identity of metadata/ as it is now (assertSameDataDir first: same directory). */
export function withMetadataIdentity(dir: string, opened: DirIdentity): DirIdentity {
  assertSameDataDir(dir, opened);
  const metadata = inode(join(dir, 'metadata'));
  return metadata === undefined ? opened : { ...opened, metadata };
}

const same = (a: { dev: number; ino: number } | undefined, b: { dev: number; ino: number }): boolean => a !== undefined && a.dev === b.dev && a.ino === b.ino;

/**
 * Fails when the data directory is no longer the one the engine opened (removed, or removed and
 * created again, which the engine itself does for the next part it writes, or emptied while the
 * engine wrote into it): the engine goes on writing into files nobody will read, and reports
 * success. Checked around every request.
 */
export function assertSameDataDir(dir: string, opened: DirIdentity): void {
  const now = dirIdentity(dir);
  const intact = now !== undefined && same(now, opened) && (opened.metadata === undefined || same(now.metadata, opened.metadata));
  if (!intact) throw new DataDirError(removedMessage(dir));
}

function removedMessage(dir: string): string {
  return `the data directory ${dir} was removed (or replaced) while toolcanon was using it: what was written since is lost; run the command again (it creates the directory anew; what a rerun writes twice is stored once)`;
}

/**
 * One line for a failure of the embedded engine on `dir` (at start or while writing), or
 * undefined when it is not about the directory (an SQL error, say).
 */
export function describeEngineFailure(error: unknown, dir: string): string | undefined {
  const message = String((error as Error)?.message ?? error);
  if (/Cannot lock file|Another server instance in same directory/i.test(message)) {
    const holder = lockHolder(dir);
    if (holder !== undefined) return busyMessage(dir, holder);
    const { pid, since } = readStatusFile(dir);
    return busyMessage(dir, pid === undefined ? undefined : { pid, command: commandOf(pid), since }, true);
  }
  // chdb's own errors for a request after the engine's connection was closed (raw insert, query).
  if (/No active connection available|ChdbConnection is closed/.test(message)) {
    return `the embedded engine of the data directory ${dir} was closed while toolcanon was using it: nothing more was written, and what the unfinished batch wrote is not counted; run the command again (what a rerun writes twice is stored once)`;
  }
  let exists = true;
  try {
    exists = statSync(dir).isDirectory();
  } catch {
    exists = false;
  }
  if (!exists) return removedMessage(dir);
  if (/NOT_ENOUGH_SPACE|No space left on device|errno: 28\b|ENOSPC|Cannot reserve .*not enough space|File too large|errno: 27\b|EFBIG/i.test(message)) {
    const detail = /Cannot reserve [0-9.]+ \w+/.exec(message)?.[0] ?? (/File too large|EFBIG/i.test(message) ? 'file too large for this process or file system' : 'no space left on the device');
    return `the disk of the data directory ${dir} is full (${detail}): free some space there, or ${ANOTHER}, then run the command again: the batches already stored are kept and not doubled`;
  }
  // About the engine's own files, not a user's file() query of user_files/.
  const engineFile = message.includes(dir) && !message.includes(`${dir}/user_files`);
  if (/Read-only file system|errno: 30\b|EROFS/i.test(message) && engineFile) {
    return `the data directory ${dir} is on a read-only file system: remount it read-write or ${ANOTHER}, then run the command again`;
  }
  if (/Permission denied|errno: 13\b|EACCES/i.test(message) && engineFile) {
    return `the data directory ${dir} (or a file in it) is not writable${whoAmI()} (permission denied): make it writable (chmod -R u+w, or chown it to this user) or ${ANOTHER}, then run the command again`;
  }
  if (/No such file or directory|errno: 2\b|ENOENT|filesystem error/i.test(message) && engineFile) {
    return `files of the data directory ${dir} were removed while toolcanon was using it: nothing more was written; run the command again (what a rerun writes twice is stored once), or ${ANOTHER}`;
  }
  const damaged = describeDamagedPart(message, dir);
  if (damaged !== undefined) return damaged;
  if (/Failed to create connection for path/i.test(message)) {
    // The engine printed why above (its own text); the cases toolcanon can tell, in one line.
    const holder = lockHolder(dir);
    if (holder !== undefined && holder.pid !== process.pid) return busyMessage(dir, holder);
    const definition = damagedDefinition(dir);
    if (definition !== undefined) return definition;
    return `the embedded engine could not open the data directory ${dir} (its own message is above; a file it names may be damaged): move the directory aside and run replay or import again to rebuild it, or ${ANOTHER}`;
  }
  return undefined;
}

/**
 * Taken while this process starts the engine on `dir`: a file made with O_EXCL, naming this
 * process. Two processes started at the same instant both find the directory free (no engine
 * holds its lock yet) and both start an engine; the loser's engine prints its own two lines
 * about the lock before it fails, and nothing can take them back. With this file only one
 * starts at a time: the other waits until the engine that started holds the lock, then says
 * which process uses the directory (assertNotBusy), as for any directory in use.
 */
const STARTING_FILE = 'toolcanon.starting';

/** A starting file older than this whose process is gone, or of this very process, is left over from a crash. */
const STARTING_STALE_MS = 2_000;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

/**
 * Waits for this process's turn to start the engine on `dir` (see STARTING_FILE), checking that
 * no other process holds the directory; returns the function that ends the turn (call it once
 * the engine holds the directory's lock, or failed to start). Throws a DataDirError when
 * another process holds the directory, or still starts on it after `timeoutMs`.
 */
export async function claimEngineStart(dir: string, timeoutMs = 60_000): Promise<() => void> {
  const path = join(dir, STARTING_FILE);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    assertNotBusy(dir);
    let fd: number | undefined;
    try {
      fd = openSync(path, 'wx');
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw new DataDirError(`cannot use the data directory ${dir}: ${describeFsError(error)}: ${ANOTHER}`, { cause: error });
    }
    if (fd !== undefined) {
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      assertNotBusy(dir); // a process that started while this one made the file holds it now
      return () => rmSync(path, { force: true });
    }
    // Another process starts its engine on this directory now.
    let pid: number | undefined;
    let ageMs = 0;
    try {
      pid = Number(readFileSync(path, 'utf8').trim()) || undefined;
      ageMs = Date.now() - statSync(path).mtimeMs;
    } catch {
      continue; // gone meanwhile: try again
    }
    const stale = pid === undefined ? ageMs > STARTING_STALE_MS : pid === process.pid || (!processAlive(pid) && ageMs > STARTING_STALE_MS / 10);
    if (stale) {
      rmSync(path, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new DataDirError(busyMessage(dir, pid === undefined ? undefined : { pid, command: commandOf(pid), since: undefined }));
    }
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

/**
 * The table definitions of the engine's databases (`metadata/<db>/<table>.sql`, written by the
 * engine as `ATTACH TABLE ...`): the engine will not start when one cannot be parsed, and says so
 * only in lines of its own on stderr. Checked before it starts (a few small files): the first one
 * that is empty, truncated or not a table definition, in one line naming it and what to do.
 */
export function assertTablesReadable(dir: string): void {
  const line = damagedDefinition(dir);
  if (line !== undefined) throw new DataDirError(line);
}

function damagedDefinition(dir: string): string | undefined {
  const metadata = join(dir, 'metadata');
  let databases: string[];
  try {
    databases = readdirSync(metadata);
  } catch {
    return undefined; // no database yet
  }
  for (const db of databases) {
    let files: string[];
    try {
      if (!statSync(join(metadata, db)).isDirectory()) continue;
      files = readdirSync(join(metadata, db));
    } catch {
      continue;
    }
    for (const f of files) {
      if (!f.endsWith('.sql')) continue;
      const file = join(metadata, db, f);
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        return `the table definition ${file} in the data directory ${dir} cannot be read (${describeFsError(error)}): make it readable, or move the directory aside and run replay or import again to rebuild it, or ${ANOTHER}`;
      }
      const problem = definitionProblem(text);
      if (problem !== undefined) {
        return `the table definition ${file} in the data directory ${dir} is damaged (${problem}), so the engine cannot start: restore the file from a backup, or move the directory aside (mv ${dir} ${dir}.damaged) and run replay or import again to rebuild it`;
      }
    }
  }
  return undefined;
}

/** Why a metadata file is not a whole `ATTACH TABLE` statement as the engine writes one, or undefined. */
export function definitionProblem(text: string): string | undefined {
  if (text.trim() === '') return 'empty';
  if (!/^ATTACH (?:TABLE|VIEW|MATERIALIZED VIEW|DICTIONARY) /.test(text)) return 'not a table definition';
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '`' || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return 'unbalanced parentheses';
    else if (c === '\0') return 'binary bytes in it';
  }
  if (quote !== undefined || depth !== 0) return 'truncated';
  if (/^ATTACH TABLE /.test(text) && !/\bENGINE = /.test(text)) return 'truncated';
  return undefined;
}

/** Codes and messages of the engine for a data file whose bytes are not what was written. */
const DAMAGED_DATA = /Checksum doesn't match|CHECKSUM_DOESNT_MATCH|CORRUPTED_DATA|Cannot decompress|CANNOT_DECOMPRESS|Unknown codec family|LZ4 decompression failed|Cannot read all data|CANNOT_READ_ALL_DATA|ATTEMPT_TO_READ_AFTER_EOF|Too large size \(\d+\) passed to allocator|Unexpected end of file while reading/i;

/** Names a table by the directory of its data (`store/xyz/<uuid>`), from the data/<db>/<table> links. */
function tableOfStore(dir: string, storeDir: string): string | undefined {
  const data = join(dir, 'data');
  try {
    for (const db of readdirSync(data)) {
      for (const table of readdirSync(join(data, db))) {
        try {
          const target = readlinkSync(join(data, db, table)).replace(/\/+$/, '');
          if (target.endsWith(storeDir.slice(storeDir.indexOf('/store/') + 1))) return table;
        } catch {
          // not a link
        }
      }
    }
  } catch {
    // no data folder
  }
  return undefined;
}

/**
 * One line for a query that read a data part whose files are damaged (a checksum that does not
 * match, a file cut short): the part, its table and the file, and how to set the part aside so
 * that the rest reads, then store its rows again. Undefined when the message is not about one.
 */
export function describeDamagedPart(message: string, dir: string): string | undefined {
  if (!DAMAGED_DATA.test(message)) return undefined;
  const file = /(?:While reading or decompressing|while reading|from file|File) (\/[^\s(),:]+)/i.exec(message)?.[1];
  const partPath = /while reading from part (\/\S+?)\/? in table/i.exec(message)?.[1] ?? (file === undefined ? undefined : dirname(file));
  // The engine's own part folders (store/<uuid>/<part>), not a user's file() of user_files/.
  if (partPath === undefined || !/\/(?:store|data)\//.test(partPath)) return undefined;
  const part = basename(partPath);
  const table = /in table [^.\s]+\.([^\s(]+)/.exec(message)?.[1] ?? tableOfStore(dir, dirname(partPath));
  const what = /Checksum doesn't match|CHECKSUM_DOESNT_MATCH/i.test(message) ? 'its checksum does not match' : /Cannot read all data|CANNOT_READ_ALL_DATA|ATTEMPT_TO_READ_AFTER_EOF|Unexpected end of file/i.test(message) ? 'it is cut short' : 'it cannot be decompressed';
  const name = file ?? partPath;
  const detach = table === undefined ? `move the part's folder ${partPath} out of the data directory while no toolcanon runs` : `toolcanon query "ALTER TABLE ${table} DETACH PART '${part}'" --db ${dir}`;
  return `a data part of the data directory ${dir} is damaged: ${name}${table === undefined ? '' : ` (table ${table}, part ${part})`}: ${what}; set the part aside with ${detach}, then replay or import its sources again to store its rows again (what is stored twice is kept once)`;
}

/**
 * The parts the engine set aside as damaged when it started (`data/<db>/<table>/detached/
 * broken-on-start_<part>`): it does so without a word, and their rows are no longer read.
 */
export function partsSetAside(dir: string): Set<string> {
  const found = new Set<string>();
  const data = join(dir, 'data');
  let databases: string[];
  try {
    databases = readdirSync(data);
  } catch {
    return found;
  }
  for (const db of databases) {
    let tables: string[] = [];
    try {
      tables = readdirSync(join(data, db));
    } catch {
      continue;
    }
    for (const table of tables) {
      try {
        for (const entry of readdirSync(join(data, db, table, 'detached'))) {
          if (entry.startsWith('broken-on-start_')) found.add(join(data, db, table, 'detached', entry));
        }
      } catch {
        // no detached/ folder
      }
    }
  }
  return found;
}

/** One line for each part the engine set aside while it started now (in `after`, not in `before`). */
export function describePartsSetAside(dir: string, before: ReadonlySet<string>, after: ReadonlySet<string>): string[] {
  const lines: string[] = [];
  for (const path of after) {
    if (before.has(path)) continue;
    const table = basename(dirname(dirname(path)));
    lines.push(
      `warning: a data part of table ${table} in the data directory ${dir} was damaged: the engine set it aside as it started (${path}) and its rows are no longer read; replay or import their sources again to store them again (what is stored twice is kept once), then delete that folder`,
    );
  }
  return lines;
}
