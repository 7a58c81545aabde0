// Finding the live owner of an embedded data directory (src/serve/owner.ts starts one): the owner
// file and the token file, read without loading anything else, so that a command that runs on
// every prompt (statusline) can look for an owner for the cost of a few file reads.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DataDirError, lockHolder } from '../sink/datadir.ts';
import { errorCode } from '../util/fs-error.ts';

export const OWNER_FILE = 'toolcanon.owner.json';
export const TOKEN_FILE = 'toolcanon.token';

/** What the owner file says (JSON, mode 0600). */
export interface OwnerFile {
  readonly pid: number;
  /** The engine process (holds the directory's lock). */
  readonly enginePid: number;
  /** The token-checking proxy: ClickHouse's HTTP API and the page at `/`. */
  readonly url: string;
  readonly tokenFile: string;
  /** e.g. `toolcanon serve`, `toolcanon watch`. */
  readonly command: string;
  readonly startedAt: string;
}

/** A live owner, as another process finds it. */
export interface FoundOwner extends OwnerFile {
  readonly token: string;
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

export function readOwnerFile(dir: string): OwnerFile | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as Partial<OwnerFile>;
    if (typeof v.pid !== 'number' || typeof v.enginePid !== 'number' || typeof v.url !== 'string' || typeof v.tokenFile !== 'string') return undefined;
    return { pid: v.pid, enginePid: v.enginePid, url: v.url, tokenFile: v.tokenFile, command: String(v.command ?? 'toolcanon'), startedAt: String(v.startedAt ?? '') };
  } catch {
    return undefined;
  }
}

/** Whether the owner file's processes are alive and its engine holds the directory (not a reused pid). */
function isLive(dir: string, info: OwnerFile): boolean {
  if (!processAlive(info.pid) || !processAlive(info.enginePid)) return false;
  const holder = lockHolder(dir);
  if (holder !== undefined) return holder.pid === info.enginePid;
  // No lock on the status file: on Linux (/proc/locks) that means no engine holds the directory.
  return process.platform !== 'linux';
}

/**
 * The live owner of `dataDir`, with its token, or undefined: no owner file, a stale one (its
 * process is gone, or its engine does not hold the directory), or one this user cannot read.
 * Throws a DataDirError when an owner is live but its token file cannot be read (another user's
 * directory): the caller cannot read through it, and must not fall back to the locked engine.
 */
export function findOwner(dataDir: string): FoundOwner | undefined {
  const dir = resolve(dataDir);
  const info = readOwnerFile(dir);
  if (info === undefined || !isLive(dir, info)) return undefined;
  let token: string;
  try {
    token = readFileSync(info.tokenFile, 'utf8').trim();
  } catch (error) {
    throw new DataDirError(`the data directory ${dir} is served by process ${info.pid} (${info.command}), but its token file ${info.tokenFile} cannot be read (${errorCode(error) ?? 'error'}): only the directory's owner may read through it`, { cause: error });
  }
  return { ...info, token };
}

/**
 * Forgets this process's credentials for a ClickHouse server ($TOOLCANON_CLICKHOUSE_USER,
 * _PASSWORD, _PASSWORD_FILE): they win over a URL's, and a process whose target is an embedded
 * directory (no server URL) uses none, so an owner's engine (which refuses a password it does not
 * know) and its proxy (which wants its token) must not be sent them.
 */
export function forgetServerCredentials(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of ['TOOLCANON_CLICKHOUSE_USER', 'TOOLCANON_CLICKHOUSE_PASSWORD', 'TOOLCANON_CLICKHOUSE_PASSWORD_FILE']) delete env[name];
}
