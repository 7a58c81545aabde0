// Decoding in a worker thread, for the file-fed sources (replay, import): the main thread reads
// lines and sends them, a worker thread decodes them and encodes the tool-call rows, and the main
// thread is left the accounting and the engine's requests. Measured (bench/handoff.ts): the main
// thread's share of reading, decoding and encoding an event falls to ~0.15 of doing it itself,
// because what comes back is small (the accounting's fields of each event) and the encoded rows
// move between the threads without a copy.
//
// Order is kept: messages between two threads arrive in the order they were sent, and the items of
// a message come back in the order of its lines. Nothing is lost: every line sent comes back as
// an item (decodeEvent never throws), and a worker that fails fails every wait on it with the
// reason, so the run stops with an error instead of going on without those events.
//
// Opt-in (`TOOLCANON_DECODE_THREAD=1`; why, at decodeThreadAvailable). Only the compiled code
// (dist/, what the bin runs) starts the thread: a worker thread loads its
// module with Node's own loader, which takes no TypeScript. From the sources (tests, tsx) the
// events are decoded in the main thread, by the same decodeEvent.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ContentClass } from '../accounting/content-class.ts';
import type { ToolOutput } from '../accounting/session.ts';
import type { DiscoveryObservation } from '../model/mcp.ts';
import type { RowFlag } from '../model/records.ts';
import type { EncodedBlock, NativeColumn } from '../model/sink.ts';
import type { DecodeLimits, DecodeOutcome } from '../decode/event.ts';

/** What the batch writer keeps of a decoded event: a tool call's row is in the message's block. */
export type DecodedItem =
  | {
      readonly kind: 'row';
      readonly call: ToolOutput;
      readonly outputClass: ContentClass;
      readonly ingestedAt: string;
      readonly discovery: DiscoveryObservation | undefined;
      readonly flags: readonly RowFlag[];
      readonly redactions: number;
    }
  | Exclude<DecodeOutcome, { kind: 'row' }>;

/** Tool-call rows encoded by the worker: one Native block of `rows` rows, as parts to write in order. */
/** What the worker starts with. */
export interface ThreadSetup {
  readonly ingestedAt: string;
  readonly limits: DecodeLimits;
  /** The tool-call columns the block is encoded in (the sink's, src/sink/native.ts). */
  readonly columns: readonly NativeColumn[];
}

/** Lines sent to the worker: their bytes one after another, where each ends, and each one's position. */
export interface ThreadInput {
  readonly bytes: Uint8Array;
  readonly ends: Uint32Array;
  readonly sources: readonly string[];
}

/** One message back: an item per line sent, in order, and the block of the tool-call rows among them. */
export interface ThreadOutput {
  readonly items: readonly DecodedItem[];
  readonly block: EncodedBlock | undefined;
}

/** Lines per message to the worker (and back). */
const MESSAGE_LINES = 512;
/** Bytes of lines per message, at most (a message closes at the first limit reached). */
const MESSAGE_BYTES = 1 << 20;

const WORKER_FILE = fileURLToPath(new URL('./decode-worker.js', import.meta.url));

/**
 * Whether a run decodes in a worker thread: asked for (`TOOLCANON_DECODE_THREAD=1`) and possible
 * (the compiled code, with its worker module). Off by default: on this project's 2-core machines
 * the engine's threads already take the second core, so the thread's gain is within the noise
 * (paired replays of 200 k events 0.95-1.18x, median ~1.05) while it adds ~100 MB of RSS
 * (docs/performance.md, "Decode thread").
 */
export function decodeThreadAvailable(): boolean {
  return process.env['TOOLCANON_DECODE_THREAD'] === '1' && import.meta.url.endsWith('.js') && existsSync(WORKER_FILE);
}

let started = 0;

/** Decode threads this process started (a run's summary and tests tell by it which way a run went). */
export function decodeThreadsStarted(): number {
  return started;
}

/**
 * A worker thread decoding lines. post() each line in order; what comes back is handed to
 * `receive` in the same order, on the main thread. settled(n) resolves once at most n lines are
 * still out (sending what is held first).
 */
export class DecodeThread {
  private readonly worker: Worker;
  private held: Uint8Array[] = [];
  private heldSources: string[] = [];
  private heldBytes = 0;
  /** Lines sent or held and not yet received. */
  outstanding = 0;
  private waiters: { readonly below: number; readonly resolve: () => void; readonly reject: (e: Error) => void }[] = [];
  private failure: Error | undefined;
  private closed = false;

  constructor(setup: ThreadSetup, private readonly receive: (output: ThreadOutput) => void) {
    this.worker = new Worker(WORKER_FILE, { workerData: setup });
    started++;
    // The thread never keeps the process alive: a run that ends (or fails) does not wait for it.
    this.worker.unref();
    this.worker.on('message', (output: ThreadOutput) => {
      if (this.failure) return;
      this.outstanding -= output.items.length;
      try {
        this.receive(output);
      } catch (error) {
        this.fail(error as Error);
        return;
      }
      this.wake();
    });
    this.worker.on('error', (error) => this.fail(new Error(`The decode thread failed: ${error.message}`)));
    this.worker.on('exit', (code) => {
      if (!this.closed) this.fail(new Error(`The decode thread exited (code ${code}) with ${this.outstanding} lines not decoded`));
    });
  }

  /** Sends one line (held, and sent with the next ones as one message). Throws once the thread failed. */
  post(bytes: Uint8Array, source: string): void {
    if (this.failure) throw this.failure;
    this.held.push(bytes);
    this.heldSources.push(source);
    this.heldBytes += bytes.byteLength;
    this.outstanding++;
    if (this.held.length >= MESSAGE_LINES || this.heldBytes >= MESSAGE_BYTES) this.send();
  }

  /** Sends the held lines as one message: their bytes copied into one buffer, moved to the worker. */
  private send(): void {
    if (this.held.length === 0) return;
    const bytes = new Uint8Array(this.heldBytes);
    const ends = new Uint32Array(this.held.length);
    let at = 0;
    for (let i = 0; i < this.held.length; i++) {
      const line = this.held[i] as Uint8Array;
      bytes.set(line, at);
      at += line.byteLength;
      ends[i] = at;
    }
    const input: ThreadInput = { bytes, ends, sources: this.heldSources };
    this.worker.postMessage(input, [bytes.buffer, ends.buffer]);
    this.held = [];
    this.heldSources = [];
    this.heldBytes = 0;
  }

  /** Resolves once at most `below` lines are out (held lines are sent first); rejects if the thread failed. */
  settled(below: number): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    this.send();
    if (this.outstanding <= below) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ below, resolve, reject }));
  }

  private wake(): void {
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (this.outstanding <= w.below) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const w of this.waiters) w.reject(error);
    this.waiters = [];
  }

  /** Stops the thread (after settled(0), nothing is lost). */
  async close(): Promise<void> {
    this.closed = true;
    await this.worker.terminate();
  }
}
