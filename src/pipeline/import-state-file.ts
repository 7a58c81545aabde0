// The import state of a machine that writes no local database (`import --to-kafka`): what each
// importer has read of each file, one JSON file per importer in the import state directory,
// replaced atomically (written beside, then renamed) once the broker acknowledged every event
// of the files it records. Records of files deleted since stay: what was read stays read.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ImportFileState } from '../model/sink.ts';
import type { ImportStateStore } from './import.ts';

/** The state file's format: a version, then the files by path. */
interface StateFileV1 {
  readonly version: 1;
  readonly importer: string;
  readonly files: Record<string, ImportFileState & { readonly importedAt: string }>;
}

/** A state file that cannot be read as one (the command line prints it as one line). */
export class ImportStateError extends Error {
  override readonly name = 'ImportStateError';
}

export function stateFilePath(dir: string, importer: string): string {
  return join(dir, `${importer}.json`);
}

function isFileState(v: unknown): v is ImportFileState & { importedAt: string } {
  if (typeof v !== 'object' || v === null) return false;
  const f = v as Record<string, unknown>;
  return Number.isSafeInteger(f['sizeBytes']) && typeof f['mtimeMs'] === 'number' && Number.isSafeInteger(f['completeBytes']);
}

function readState(file: string, importer: string): StateFileV1 {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, importer, files: {} };
    throw new ImportStateError(`cannot read the import state ${file}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ImportStateError(`the import state ${file} is not JSON (${(error as Error).message}): move it away to import everything again`);
  }
  const p = parsed as Partial<StateFileV1> | null;
  if (p === null || typeof p !== 'object' || p.version !== 1 || typeof p.files !== 'object' || p.files === null || !Object.values(p.files).every(isFileState)) {
    throw new ImportStateError(`the import state ${file} is not a toolcanon import state (version 1): move it away to import everything again`);
  }
  return p as StateFileV1;
}

/** The import state kept in `dir` (created on the first save). */
export function fileImportState(dir: string): ImportStateStore {
  return {
    // Promises, never a throw at the call: a state it cannot read is a rejection like any other.
    load: (importer) => {
      let state: StateFileV1;
      try {
        state = readState(stateFilePath(dir, importer), importer);
      } catch (error) {
        return Promise.reject(error as Error);
      }
      return Promise.resolve(new Map(Object.entries(state.files).map(([path, f]) => [path, { sizeBytes: f.sizeBytes, mtimeMs: f.mtimeMs, completeBytes: f.completeBytes }])));
    },
    save: (importer, files, importedAt) => {
      const file = stateFilePath(dir, importer);
      // Read again: the records of files not read by this run are kept as they are.
      let state: StateFileV1;
      try {
        state = readState(file, importer);
      } catch (error) {
        return Promise.reject(error as Error);
      }
      const merged: StateFileV1['files'] = { ...state.files };
      for (const [path, f] of files) merged[path] = { sizeBytes: f.sizeBytes, mtimeMs: f.mtimeMs, completeBytes: f.completeBytes, importedAt };
      mkdirSync(dir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify({ version: 1, importer, files: merged } satisfies StateFileV1, null, 1)}\n`);
      renameSync(tmp, file);
      return Promise.resolve();
    },
  };
}
