// A copy of one importer's import state (what the database's import_files says it read of each
// file, on one machine), kept in the embedded data directory beside the engine's tables. An
// import that finds every one of its files as that copy recorded them (same size, same mtime)
// has nothing to read: it answers from the copy, without starting the engine, which is most of
// such a process's time (start ~0.12 s, the engine library and its session ~0.2-0.3 s more, on
// this project's 2-core machines; see docs/performance.md). Any other case (a new or grown file,
// no copy, a copy the table moved past) takes the usual way, which reads the database's state.
//
// The copy is only ever a subset of what the database holds, as long as the database's records
// never go back. They go forward only (an import, watch or Kafka import adds records), so the
// copy is checked against a stamp of import_files read from its folder: the block numbers its
// parts cover and their mutations. An insert adds blocks and a merge keeps the blocks it joins;
// a DELETE (a mutation), a TRUNCATE or a DETACH changes the stamp, and the copy is not used. So
// is a data directory replaced by another (another table folder). `toolcanon query` and
// `serve`, which run SQL they did not write, remove the copies before they start the engine.
import { mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { ImportFileState } from '../model/sink.ts';

/** The folder of the copies inside a data directory (the engine leaves unknown folders alone). */
export const MIRROR_DIR = 'import-mirror';
const FORMAT = 1;

/** import_files as its folder shows it: which table, the blocks its parts cover, their mutations. */
export interface ImportFilesStamp {
  readonly table: string;
  /** Disjoint, sorted block ranges [from, to] covered by the table's parts. */
  readonly blocks: readonly (readonly [number, number])[];
  /** The parts' mutation versions and mutation files, sorted. */
  readonly mutations: readonly string[];
}

const PART = /^all_(\d+)_(\d+)_(\d+)(?:_(\d+))?$/;
const MUTATION_FILE = /^mutation_\d+\.txt$/;
/** Entries of a MergeTree table folder that are not parts. */
const NOT_PARTS = new Set(['detached', 'format_version.txt']);

/**
 * The stamp of the data directory's import_files, or undefined when its folder shows anything
 * this does not know (a part being written or merged, a partitioned table, no table): then no
 * copy is trusted or written.
 */
export function importFilesStamp(dir: string): ImportFilesStamp | undefined {
  let table: string;
  let names: string[];
  try {
    table = realpathSync(join(dir, 'data', 'default', 'import_files'));
    names = readdirSync(table);
  } catch {
    return undefined;
  }
  const ranges: [number, number][] = [];
  const mutations: string[] = [];
  for (const name of names) {
    if (NOT_PARTS.has(name)) continue;
    if (MUTATION_FILE.test(name)) {
      mutations.push(name);
      continue;
    }
    const m = PART.exec(name);
    if (m === null) return undefined;
    ranges.push([Number(m[1]), Number(m[2])]);
    if (m[4] !== undefined) mutations.push(`${m[1]}_${m[2]}@${m[4]}`);
  }
  ranges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const blocks: [number, number][] = [];
  for (const [from, to] of ranges) {
    const last = blocks[blocks.length - 1];
    if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else blocks.push([from, to]);
  }
  return { table, blocks, mutations: mutations.sort() };
}

function mirrorFile(dir: string, importer: string, deviceId: string): string {
  const device = createHash('sha256').update(deviceId).digest('hex').slice(0, 16);
  return join(dir, MIRROR_DIR, `${importer}-${device}.json`);
}

interface MirrorDocument {
  readonly format: number;
  readonly importer: string;
  readonly deviceId: string;
  readonly stamp: ImportFilesStamp;
  /** path -> [size in bytes, mtime in ms] as import_files records them. */
  readonly files: Record<string, [number, number]>;
}

/**
 * Writes the copy of an importer's state on one machine (as the database returned it just now),
 * with the table's stamp as it is now; written whole to a temporary file and renamed, so a copy is
 * either the old one or the new one. Nothing is written when the table's folder cannot be
 * stamped. Never fails the import: a copy that cannot be written is removed, or left stale (and
 * then no longer matches the stamp).
 */
export function writeImportMirror(dir: string, importer: string, deviceId: string, state: ReadonlyMap<string, ImportFileState>): void {
  const file = mirrorFile(dir, importer, deviceId);
  try {
    const stamp = importFilesStamp(dir);
    if (stamp === undefined) {
      rmSync(file, { force: true });
      return;
    }
    const files: Record<string, [number, number]> = {};
    for (const [path, s] of state) files[path] = [s.sizeBytes, s.mtimeMs];
    const doc: MirrorDocument = { format: FORMAT, importer, deviceId, stamp, files };
    mkdirSync(join(dir, MIRROR_DIR), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(doc));
    renameSync(tmp, file);
  } catch {
    try {
      rmSync(file, { force: true });
    } catch {
      // Left as it was: its stamp no longer matches once the table moved on.
    }
  }
}

/**
 * Whether every one of `files` is, by size and mtime, as the copy of the importer's state on
 * this machine records it, and the copy still holds (the table's stamp unchanged). False when
 * there is no copy, or any doubt.
 */
export function unchangedSinceMirror(dir: string, importer: string, deviceId: string, files: readonly string[]): boolean {
  if (files.length === 0) return false;
  let doc: MirrorDocument;
  try {
    doc = JSON.parse(readFileSync(mirrorFile(dir, importer, deviceId), 'utf8')) as MirrorDocument;
  } catch {
    return false;
  }
  if (doc.format !== FORMAT || doc.importer !== importer || doc.deviceId !== deviceId) return false;
  const stamp = importFilesStamp(dir);
  // Both made by importFilesStamp (one through JSON): the same keys in the same order.
  if (stamp === undefined || JSON.stringify(stamp) !== JSON.stringify(doc.stamp)) return false;
  for (const path of files) {
    const recorded = Object.hasOwn(doc.files, path) ? doc.files[path] : undefined;
    if (recorded === undefined) return false;
    let size: number;
    let mtimeMs: number;
    try {
      ({ size, mtimeMs } = statSync(path));
    } catch {
      return false;
    }
    if (size !== recorded[0] || mtimeMs !== recorded[1]) return false;
  }
  return true;
}

/** Removes every copy in a data directory (before SQL that may change import_files runs). */
export function dropImportMirrors(dir: string): void {
  rmSync(join(dir, MIRROR_DIR), { recursive: true, force: true });
}
