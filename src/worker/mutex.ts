// A first-come-first-served async lock: the batch handler, the flush timer and shutdown take
// turns on the one batch writer (which must not take events while it flushes).

export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  private holders = 0;

  /** True while someone holds the lock or waits for it. */
  get busy(): boolean {
    return this.holders > 0;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    this.holders++;
    const previous = this.tail;
    let release: () => void = () => {};
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      await previous;
      return await fn();
    } finally {
      this.holders--;
      release();
    }
  }
}
