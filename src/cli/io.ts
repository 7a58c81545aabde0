// What a command writes to: kept abstract so tests can capture it.

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** True when stderr is a terminal (progress bars are drawn only then). */
  readonly isTty: boolean;
}

/** A mistake in how a command was called: printed with the usage hint, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
