// What the sink throws when ClickHouse (embedded or a server) fails in a way a user can act on:
// one line that names the directory or the server and says what to do.

export class SinkError extends Error {
  override readonly name: string = 'SinkError';
  constructor(
    message: string,
    /** True when waiting may help (a server down or slow); false for what needs a fix first. */
    readonly transient: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
