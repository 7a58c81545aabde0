// `toolcanon watch`: follows the harnesses' log folders as they are written and imports what is
// appended, through the same incremental reading as `import` (readImport, its import state: a
// database's import_files per device, or --to-kafka's state file). A change is noticed by a
// file-system notification on the folder that holds the file (one inotify watch per folder, not
// per file), and, as a fallback for what notifications miss (network file systems, a watch limit
// reached), by a rescan every `rescanMs`; nothing polls in between. Each cycle reads the files
// that changed since the last one, writes their new events, waits until everything is stored (or
// acknowledged by the broker) and then records what was read: a process killed at any point
// resumes from the last recorded cycle, and what it writes twice is stored once (deterministic
// event ids). A last line without its newline is left for the cycle that sees it complete
// (LineSplitter), never a dead letter.
//
// Files that shrink, are replaced under the same name (a rotation: another inode), are rewritten
// before the point already read (the bytes before it changed), or disappear are said in one line
// each; the first three are read again from the start (what was stored stays, kept once), the
// last keeps what was read of it.
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { nowClickHouseTime } from '../decode/event.ts';
import { readImport, type ImportOptions, type ImportReading, type ImportStateStore, type ImportTarget } from '../pipeline/import.ts';
import type { Importer } from '../importers/types.ts';
import type { ImportFileState } from '../model/sink.ts';

/** One harness followed: its importer and the folders (or files) it reads. */
export interface FollowedHarness {
  readonly importer: Importer;
  readonly roots: readonly string[];
}

/** Where a cycle's records go and where what was read is recorded. */
export interface FollowSink {
  /** The target of one cycle (the database's writer target, or the Kafka publisher's). */
  cycleTarget(ingestedAt: string): ImportTarget;
  /**
   * After a failed cycle: drop what the failed cycle left buffered or half written (the next
   * cycle reads those files again from what was recorded, as a restarted process would).
   */
  reset?(): void;
  readonly state: ImportStateStore;
}

/** What one cycle read of one harness (the CLI prints a line per cycle that read something). */
export interface CycleReport {
  readonly importer: string;
  readonly files: readonly string[];
  readonly reading: ImportReading;
  /** Files whose last line is still unterminated after the cycle (waiting for its newline). */
  readonly tornFiles: number;
  /** Files read to their end because they had been still for tailSettleMs (events kept back handed out). */
  readonly released: number;
  /** Events held back at the ends of this harness's files after the cycle (ImportOptions.holdTail). */
  readonly heldEvents: number;
  readonly tailSettleMs: number;
}

export interface FollowOptions {
  /** Rescan of every folder as a fallback for missed notifications (default 10 s). */
  readonly rescanMs?: number;
  /** A cycle starts this long after the first notification, so a burst of writes is one cycle (default 100 ms). */
  readonly settleMs?: number;
  /**
   * A file's events kept back (a call waiting for its result, a response still streamed: see
   * ImportOptions.holdTail) are handed out once the file has not changed for this long, as they
   * are (default 30 s: a session may end on a pending call or a last answer). Shorter makes a
   * turn's last answer show sooner, but in the shared corpus 30 % of the pauses between two lines
   * of one streamed response are over 1.5 s, 11 % over 5 s and 4 % over 10 s: a response handed
   * out in such a pause is applied again when its later lines come (other running figures).
   */
  readonly tailSettleMs?: number;
  /** One line on stderr: a file truncated, replaced, rewritten or deleted; a failed cycle. */
  readonly say: (line: string) => void;
  /** After each cycle that read a file of a harness. */
  readonly onCycle?: (report: CycleReport) => void;
  /** A cycle failed (the sink or broker is down): the cycle is tried again at the next rescan. */
  readonly onError?: (error: unknown) => void;
  /** Reading options of the import (the machine, limits, accounting). */
  readonly reading?: Omit<ImportOptions, 'onProgress' | 'recordIf'>;
}

/** What the follower knows of a file: its state as last recorded, its inode, and the bytes before its read point. */
interface Known extends ImportFileState {
  readonly ino: number | undefined;
  /** A hash of the first and the last (up to) 64 bytes before completeBytes, undefined when not taken (state loaded from the store). */
  readonly tail: string | undefined;
}

const TAIL_BYTES = 64;

/** Totals over the cycles of a run (the stop summary). */
export interface FollowTotals {
  cycles: number;
  filesRead: number;
  recordsRead: number;
  eventsEmitted: number;
  malformedRecords: number;
  filesReset: number;
  filesDeleted: number;
  failedCycles: number;
  /** Events kept back at the end of the last cycle (written by a later one, or by the next run). */
  eventsHeld: number;
}

function tailHash(path: string, end: number): string | undefined {
  if (end <= 0) return '';
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    // The first and the last bytes before the read point: a rewrite that changes either is seen.
    const hash = createHash('sha1');
    for (const start of [0, Math.max(0, end - TAIL_BYTES)]) {
      const buffer = Buffer.alloc(Math.min(TAIL_BYTES, end - start));
      const n = readSync(fd, buffer, 0, buffer.length, start);
      hash.update(buffer.subarray(0, n));
    }
    return hash.digest('hex');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function statOf(path: string): { size: number; mtimeMs: number; ino: number } | undefined {
  try {
    const s = statSync(path);
    return { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
  } catch {
    return undefined;
  }
}

/** Every folder under `root` (itself included), each once by name; a file root watches its folder. */
function foldersUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number): void => {
    out.push(dir);
    if (depth > 32) return;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory()) walk(join(dir, e.name), depth + 1);
  };
  let isDir = false;
  try {
    isDir = statSync(root).isDirectory();
  } catch {
    return [];
  }
  if (isDir) walk(root, 0);
  else out.push(join(root, '..'));
  return out;
}

export class Follower {
  readonly totals: FollowTotals = { cycles: 0, filesRead: 0, recordsRead: 0, eventsEmitted: 0, malformedRecords: 0, filesReset: 0, filesDeleted: 0, failedCycles: 0, eventsHeld: 0 };
  /** Per harness, the files whose last events are kept back, and how many. */
  private readonly held = new Map<string, Map<string, number>>();
  /** Per harness, per file, the events the last acknowledged read handed out after the point it recorded (ImportReading.handedOut). */
  private readonly handedOut = new Map<string, Map<string, ReadonlySet<string>>>();
  private readonly tailSettleMs: number;
  private releaseTimer: NodeJS.Timeout | undefined;
  private readonly known = new Map<string, Map<string, Known>>();
  private readonly watchers = new Map<string, FSWatcher>();
  private readonly rescanMs: number;
  private readonly settleMs: number;
  private settleTimer: NodeJS.Timeout | undefined;
  private rescanTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly harnesses: readonly FollowedHarness[],
    private readonly sink: FollowSink,
    private readonly options: FollowOptions,
  ) {
    this.rescanMs = options.rescanMs ?? 10_000;
    this.settleMs = options.settleMs ?? 100;
    this.tailSettleMs = options.tailSettleMs ?? 30_000;
    for (const h of harnesses) {
      this.known.set(h.importer.id, new Map());
      this.held.set(h.importer.id, new Map());
      this.handedOut.set(h.importer.id, new Map());
    }
  }

  /** Reads everything not read yet (as an import would), then follows. Rejects when that first cycle fails. */
  async start(): Promise<void> {
    this.syncWatchers();
    await this.cycle(true);
    this.rescanTimer = setInterval(() => {
      this.syncWatchers();
      this.trigger(0);
    }, this.rescanMs);
  }

  /** Stops following: the cycle in flight ends, a last cycle reads what was appended meanwhile, everything is stored and recorded. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.settleTimer) clearTimeout(this.settleTimer);
    if (this.rescanTimer) clearInterval(this.rescanTimer);
    if (this.releaseTimer) clearTimeout(this.releaseTimer);
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    while (this.running) await this.running;
    await this.cycle(true);
  }

  /** Watches every folder under the roots (new folders are added by the notification that names them, or the next rescan). */
  private syncWatchers(): void {
    if (this.stopped) return;
    const wanted = new Set<string>();
    for (const h of this.harnesses) for (const root of h.roots) for (const dir of foldersUnder(root)) wanted.add(dir);
    for (const [dir, w] of this.watchers) {
      if (!wanted.has(dir)) {
        w.close();
        this.watchers.delete(dir);
      }
    }
    for (const dir of wanted) {
      if (this.watchers.has(dir)) continue;
      try {
        const w = watch(dir, { persistent: true }, (_event, name) => {
          // A new folder (a session's subagents/) is watched at once; its files are read by this cycle.
          if (name !== null && !this.watchers.has(join(dir, name))) {
            const full = join(dir, name);
            if (existsSync(full) && statOf(full) !== undefined && statSync(full).isDirectory()) this.syncWatchers();
          }
          this.trigger(this.settleMs);
        });
        // A folder removed, or a watch the system refuses: the rescan still sees its files.
        w.on('error', () => {
          w.close();
          this.watchers.delete(dir);
        });
        this.watchers.set(dir, w);
      } catch {
        // Out of inotify watches, or the folder vanished: the periodic rescan covers it.
      }
    }
  }

  private trigger(delayMs: number): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.settleTimer) return;
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      void this.runCycle();
    }, delayMs);
  }

  private async runCycle(): Promise<void> {
    if (this.stopped || this.running) return;
    const run = (async () => {
      try {
        await this.cycle(false);
      } catch (error) {
        this.sink.reset?.();
        // What the failed cycle handed out may not be stored: the next read hands it out again.
        for (const files of this.handedOut.values()) files.clear();
        this.totals.failedCycles++;
        this.options.onError?.(error);
      }
    })();
    this.running = run;
    await run;
    this.running = undefined;
    if (this.again && !this.stopped) {
      this.again = false;
      this.trigger(0);
    }
  }

  /** One pass over every harness: the files that changed are read, their events stored, what was read recorded. */
  private async cycle(all: boolean): Promise<void> {
    this.totals.cycles++;
    for (const h of this.harnesses) await this.cycleOf(h, all);
    let held = 0;
    for (const files of this.held.values()) for (const n of files.values()) held += n;
    this.totals.eventsHeld = held;
    this.scheduleRelease();
  }

  /** A cycle when the first file holding events back has been still for tailSettleMs. */
  private scheduleRelease(): void {
    if (this.stopped) return;
    if (this.releaseTimer) clearTimeout(this.releaseTimer);
    this.releaseTimer = undefined;
    let due = Number.POSITIVE_INFINITY;
    for (const [id, files] of this.held) {
      const known = this.known.get(id);
      for (const path of files.keys()) due = Math.min(due, (known?.get(path)?.mtimeMs ?? 0) + this.tailSettleMs);
    }
    if (due === Number.POSITIVE_INFINITY) return;
    this.releaseTimer = setTimeout(() => {
      this.releaseTimer = undefined;
      this.trigger(0);
    }, Math.max(0, due - Date.now()) + 50);
  }

  private listFiles(h: FollowedHarness): string[] {
    const roots = h.roots.filter((r) => existsSync(r));
    if (roots.length === 0) return [];
    try {
      return h.importer.listFiles(roots);
    } catch {
      return []; // a folder removed while listing: the next rescan lists it again
    }
  }

  private async cycleOf(h: FollowedHarness, all: boolean): Promise<void> {
    const id = h.importer.id;
    const known = this.known.get(id) as Map<string, Known>;
    const files = this.listFiles(h);
    const listed = new Set(files);
    const held = this.held.get(id) as Map<string, number>;
    const handedOut = this.handedOut.get(id) as Map<string, ReadonlySet<string>>;
    for (const path of known.keys()) {
      if (listed.has(path)) continue;
      known.delete(path);
      held.delete(path);
      handedOut.delete(path);
      this.totals.filesDeleted++;
      this.options.say(`${path}: deleted; what was read of it stays stored`);
    }
    const reset = new Set<string>();
    const changed: string[] = [];
    for (const path of files) {
      const s = statOf(path);
      if (s === undefined) continue;
      const k = known.get(path);
      if (k === undefined) {
        if (all || known.size > 0 || this.totals.cycles > 1) changed.push(path);
        continue;
      }
      if (k.sizeBytes === s.size && k.mtimeMs === s.mtimeMs && (k.ino === undefined || k.ino === s.ino)) continue;
      changed.push(path);
      if (k.ino !== undefined && k.ino !== s.ino) {
        reset.add(path);
        this.options.say(`${path}: replaced by another file (rotated?): read from its start (events stored before are kept once)`);
      } else if (s.size < k.completeBytes) {
        reset.add(path);
        this.options.say(`${path}: truncated from ${k.sizeBytes} to ${s.size} bytes: read again from its start (events stored before are kept once)`);
      } else if (k.tail !== undefined && tailHash(path, k.completeBytes) !== k.tail) {
        reset.add(path);
        this.options.say(`${path}: rewritten before the ${k.completeBytes} bytes already read: read again from its start (events stored before are kept once)`);
      }
    }
    this.totals.filesReset += reset.size;
    // Files that hold events back and have been still long enough: read to their end.
    const release = new Set<string>();
    const now = Date.now();
    for (const path of held.keys()) {
      const k = known.get(path);
      if (changed.includes(path) || k === undefined || now - k.mtimeMs < this.tailSettleMs || this.stopped) continue;
      release.add(path);
      changed.push(path);
    }
    if (changed.length === 0) return;
    const inodes = new Map(changed.map((p) => [p, statOf(p)?.ino]));
    const state: ImportStateStore = {
      load: async (importer) => {
        const stored = await this.sink.state.load(importer);
        for (const [path, f] of stored) if (!known.has(path)) known.set(path, { ...f, ino: undefined, tail: undefined });
        for (const path of reset) stored.delete(path);
        return stored;
      },
      save: async (importer, saved, importedAt) => {
        await this.sink.state.save(importer, saved, importedAt);
        for (const [path, f] of saved) known.set(path, { ...f, ino: inodes.get(path), tail: tailHash(path, f.completeBytes) });
      },
    };
    const ingestedAt = nowClickHouseTime();
    for (const path of reset) handedOut.delete(path);
    const reading = await readImport(h.importer, changed, state, this.sink.cycleTarget(ingestedAt), { ...this.options.reading, ingestedAt, holdTail: true, release, handedOut });
    // Acknowledged: what this read handed out past the point it recorded is not handed out again;
    // what it held is read again later.
    for (const path of changed) {
      const out = reading.handedOut?.get(path);
      if (out === undefined || out.size === 0) handedOut.delete(path);
      else handedOut.set(path, out);
      const n = reading.held?.get(path);
      if (n === undefined) held.delete(path);
      else held.set(path, n);
    }
    // Files read to below their size: an unterminated last line waits for its newline.
    const tornFiles = reading.unterminated?.size ?? 0;
    this.totals.filesRead += reading.filesRead;
    this.totals.recordsRead += reading.recordsRead;
    this.totals.eventsEmitted += reading.eventsEmitted;
    this.totals.malformedRecords += reading.malformedRecords;
    if (reading.filesRead > 0) this.options.onCycle?.({ importer: id, files: changed, reading, tornFiles, released: release.size, heldEvents: [...held.values()].reduce((a, b) => a + b, 0), tailSettleMs: this.tailSettleMs });
  }
}
