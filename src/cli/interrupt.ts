// Ctrl-C (SIGINT) during a replay or an import: the run stops at the next write, waits for the
// write in flight (a table's insert is one part, all or nothing), says in one line how many
// events of its input are stored, and exits 130 (128 + SIGINT, as a shell reports a process
// killed by it). A second Ctrl-C exits at once. What is stored stays; a rerun stores the rest
// and keeps one copy of what it writes twice.

/** A run stopped by SIGINT: its message is the one line the CLI prints. */
export class Interrupted extends Error {
  override readonly name = 'Interrupted';
}

/** What a store call made after the interrupt gets: the run stops there. */
class StoreClosed extends Error {
  override readonly name = 'StoreClosed';
  constructor() {
    super('interrupted: no further writes');
  }
}

/** The exit code of a run stopped by SIGINT. */
export const INTERRUPTED_EXIT_CODE = 130;

/**
 * A second SIGINT this soon after the first is the same Ctrl-C (bin/toolcanon.mjs forwards the
 * terminal's SIGINT to its child, which the terminal also signals): not a second press.
 */
const SAME_PRESS_MS = 500;

export class Interruption {
  private signalledAt: number | undefined;
  private wake: () => void = () => {};
  /** Resolves at the first SIGINT. */
  private readonly signalled = new Promise<void>((resolve) => (this.wake = resolve));
  /** Store calls started before the interrupt and not settled yet. */
  private outstanding = 0;
  private settledWaiters: (() => void)[] = [];
  private readonly onSignal = (): void => {
    if (this.signalledAt === undefined) {
      this.signalledAt = Date.now();
      this.wake();
      return;
    }
    if (Date.now() - this.signalledAt < SAME_PRESS_MS) return;
    this.err('interrupted again: exiting now without waiting for the write in flight (a rerun stores what is missing; what is stored already is kept once)');
    process.exit(INTERRUPTED_EXIT_CODE);
  };

  /** Installs the SIGINT handler (until dispose). `err` prints a line on stderr. */
  constructor(private readonly err: (line: string) => void) {
    process.on('SIGINT', this.onSignal);
  }

  get interrupted(): boolean {
    return this.signalledAt !== undefined;
  }

  dispose(): void {
    process.off('SIGINT', this.onSignal);
  }

  /**
   * The store as the run sees it: every call goes through, until the interrupt; a call made
   * after it throws (the run stops at its next write or read), and the calls in flight are
   * counted so that the interrupt can wait for them.
   */
  gate<T extends object>(store: T): T {
    return new Proxy(store, {
      get: (target, property) => {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]): unknown => {
          if (this.interrupted) throw new StoreClosed();
          const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
          if (!(result instanceof Promise)) return result;
          this.outstanding++;
          return result.finally(() => {
            if (--this.outstanding === 0) for (const w of this.settledWaiters.splice(0)) w();
          });
        };
      },
    });
  }

  private settled(): Promise<void> {
    return this.outstanding === 0 ? Promise.resolve() : new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  /**
   * Runs `work` on the gated `store`. Without an interrupt: its result (or failure). After one:
   * waits for the store calls in flight, asks `stored` (given the store itself, past the gate)
   * for the line saying what is stored, and throws it as Interrupted.
   */
  async during<S extends object, T>(store: S, work: (gated: S) => Promise<T>, stored: (store: S) => Promise<string>): Promise<T> {
    const running = work(this.gate(store));
    running.catch(() => {}); // after an interrupt nobody awaits it: it stops at its next store call
    try {
      await Promise.race([running, this.signalled]);
    } catch (error) {
      if (!this.interrupted) throw error;
    }
    if (!this.interrupted) return running;
    await this.settled();
    throw new Interrupted(await stored(store));
  }
}

/**
 * The line of an interrupted run of these inputs: events of them stored now, and before the run.
 * `stdin`: whether stdin was one of them, or all (its events have no file name to be counted by).
 */
export function interruptedLine(storedNow: number, storedBefore: number | undefined, stdin: 'no' | 'also' | 'only' = 'no'): string {
  const again = 'run the same command again to store the rest (what is stored already is kept once)';
  const fromStdin = "stdin's events up to the last batch written (not counted: stdin has no name)";
  if (stdin === 'only') return `interrupted: ${fromStdin} are stored; ${again}`;
  const byRun = storedBefore === undefined ? '' : ` (${Math.max(0, storedNow - storedBefore)} by this run)`;
  const inputs = stdin === 'also' ? 'input files' : 'inputs';
  return `interrupted: ${storedNow} event(s) of these ${inputs} are stored${byRun}${stdin === 'also' ? `, and ${fromStdin}` : ''}; ${again}`;
}

/** Runs `run` with SIGINT handled as above (the handler removed after). */
export async function interruptible<T>(err: (line: string) => void, run: (stop: Interruption) => Promise<T>): Promise<T> {
  const stop = new Interruption(err);
  try {
    return await run(stop);
  } finally {
    stop.dispose();
  }
}

/** Whether stdin (`-`) is among a replay's inputs: none, one of them, or the only one. */
export function stdinOf(inputs: readonly { readonly path: string }[]): 'no' | 'also' | 'only' {
  const n = inputs.filter((f) => f.path === '-').length;
  return n === 0 ? 'no' : n === inputs.length ? 'only' : 'also';
}
