// A file a command writes (report html --out): checked before any work, and its write failures
// said in one line that names the file, never the file system's error object.
import { statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describeFsError } from '../util/fs-error.ts';
import { UsageError } from './io.ts';

/** A write of an output file that failed (exit 1), in one line. */
export class OutFileError extends Error {
  override readonly name = 'OutFileError';
}

/** Why a write failed, worded for an output file. */
function why(error: unknown): string {
  return describeFsError(error, { ENOENT: 'its folder does not exist', ENOTDIR: 'a parent is a file, not a folder' });
}

/** Refuses (exit 2) an output path whose folder is missing or not a folder, or that is a folder. */
export function checkOutFile(path: string, flag: string): void {
  const folder = dirname(resolve(path));
  let stat;
  try {
    stat = statSync(folder);
  } catch {
    throw new UsageError(`${flag} ${path}: the folder ${folder} does not exist: create it first, or give another ${flag}`);
  }
  if (!stat.isDirectory()) throw new UsageError(`${flag} ${path}: ${folder} is a file, not a folder: give another ${flag}`);
  try {
    if (statSync(path).isDirectory()) throw new UsageError(`${flag} ${path} is a folder: give a file name (e.g. ${flag} ${path.replace(/\/*$/, '')}/toolcanon-report.html)`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // Not there yet: it is created.
  }
}

/** Writes the file, or throws an OutFileError naming it and why. */
export function writeOutFile(path: string, content: string, flag: string): void {
  try {
    writeFileSync(path, content);
  } catch (error) {
    throw new OutFileError(`cannot write ${flag} ${path}: ${why(error)}`);
  }
}
