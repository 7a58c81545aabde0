// A running `toolcanon watch` for tests (test/watch, test/fleet): its stderr lines as they come,
// waits on them (never a time asserted), its cycles, its end.
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, ROOT, type TableDump } from './worker.ts';

/** A running `toolcanon watch`: its stderr lines as they come, and its end. */
export class Watch {
  readonly lines: string[] = [];
  stdout = '';
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  private waiters: (() => void)[] = [];

  constructor(args: readonly string[]) {
    this.child = spawn(process.execPath, [BIN, 'watch', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let carry = '';
    this.child.stderr?.setEncoding('utf8').on('data', (t: string) => {
      carry += t;
      const parts = carry.split('\n');
      carry = parts.pop() ?? '';
      this.lines.push(...parts);
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.stdout?.setEncoding('utf8').on('data', (t: string) => (this.stdout += t));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => {
      for (const w of this.waiters.splice(0)) w();
      resolve(code);
    }));
  }

  /** Resolves once `count` lines match (polling on each line; a generous timeout, never a time asserted). */
  async waitFor(pattern: RegExp, count = 1, timeoutMs = 120_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.lines.filter((l) => pattern.test(l)).length < count) {
      if (Date.now() > until) throw new Error(`watch never printed ${count} line(s) matching ${pattern}; it printed:\n${this.lines.join('\n')}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 1000);
      });
    }
  }

  cycles(): number {
    return this.lines.filter((l) => / claude-code: \d+ file\(s\) read/.test(l)).length;
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}


/**
 * The tables with token_usage's running context left out: a session's context after each event
 * (context_tokens, its share, the drift and the estimates since the last observation, the row
 * counter session_seq) is accounted in the order events arrive. A file read in several runs
 * (incremental imports, and so watch's cycles) hands a call first without its result and later
 * with it, so the estimate of its output lands after a usage it precedes in a one-shot read:
 * `import` run three times on a growing file gives the same differences (measured). Every event's
 * own figures (observed tokens, estimates, ids, times) are compared; so are all other tables.
 */
export const RUNNING = ['context_tokens', 'context_source', 'usage_pct', 'above_threshold', 'drift_estimated_tokens', 'drift_observed_tokens', 'drift_content_class', 'last_observed_context', 'estimated_since_observed', 'classes_since_observed', 'session_seq'];
export function comparable(d: TableDump): TableDump {
  const out: TableDump = new Map(d);
  const strip = (row: string): string => {
    const o = JSON.parse(row) as Record<string, unknown>;
    for (const k of RUNNING) delete o[k];
    return JSON.stringify(o);
  };
  out.set('token_usage', (d.get('token_usage') ?? []).map(strip).sort());
  return out;
}

