// Retry timing for a failing sink: exponential backoff with full jitter, and a sleep that can be
// cut short (a shutdown must not wait out a 30 s backoff).

export interface BackoffPolicy {
  /** Delay ceiling of the first retry. */
  readonly initialMs: number;
  /** Delay ceiling once the exponential has grown past it. */
  readonly maxMs: number;
}

/**
 * Delay before retry number `attempt` (1-based): uniformly random in [ceiling / 2, ceiling] where
 * ceiling = min(maxMs, initialMs * 2^(attempt - 1)). Half the ceiling is kept as a floor so a
 * retry never fires immediately; the random half spreads the retries of many workers apart.
 */
export function backoffDelayMs(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Resolves after `ms`, or as soon as `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
