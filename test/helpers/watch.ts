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

  /**
   * Resolves once the latest cycle holds nothing back: the events a file's end held (a call
   * waiting for its result, a response still streamed) were handed out after the file was still
   * for --tail-settle-ms (or completed by later lines).
   */
  async settled(timeoutMs = 120_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const last = [...this.lines].reverse().find((l) => / claude-code: \d+ file\(s\) read/.test(l));
      if (last !== undefined && !/held until/.test(last)) return;
      if (Date.now() > until) throw new Error(`watch still held events after ${timeoutMs} ms; it printed:\n${this.lines.join('\n')}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 1000);
      });
    }
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}


