// A small levelled logger for the long-running commands (consume, produce). The levels follow
// Vector's rule: ERROR means data was or may be lost (a record that went out without its value,
// a worker that stopped and will not take its partitions until someone restarts it), WARN that
// the service is degraded but nothing is lost (a retried insert, a refused commit, a rebalance),
// INFO progress (joined, progress lines, stopped), DEBUG what only a developer wants (kafkajs's
// own chatter). kafkajs's lines are mapped onto these levels in src/kafka/client.ts.
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface Logger {
  /** Data was or may be lost. */
  error(message: string): void;
  /** Degraded, nothing lost. */
  warn(message: string): void;
  /** Progress. */
  info(message: string): void;
  debug(message: string): void;
  /** Whether a line at this level would be written (to skip building it). */
  enabled(level: LogLevel): boolean;
}

export interface LoggerOptions {
  /** Where a finished line goes (without its newline). */
  readonly write: (line: string) => void;
  /** The quietest level written (default info). */
  readonly level?: LogLevel;
  /**
   * text: the message, after `error: ` or `warning: ` for those levels (info and debug lines are
   * the message alone, as a person reads progress); json: one object per line, {ts, level, msg}.
   */
  readonly format?: LogFormat;
  /** Applied to every message before it is written (redaction). */
  readonly transform?: (message: string) => string;
  readonly now?: () => Date;
}

const RANK: Readonly<Record<LogLevel, number>> = { error: 0, warn: 1, info: 2, debug: 3 };
const TEXT_PREFIX: Readonly<Record<LogLevel, string>> = { error: 'error: ', warn: 'warning: ', info: '', debug: 'debug: ' };

export function createLogger(options: LoggerOptions): Logger {
  const max = RANK[options.level ?? 'info'];
  const format = options.format ?? 'text';
  const now = options.now ?? (() => new Date());
  const emit = (level: LogLevel, message: string): void => {
    if (RANK[level] > max) return;
    const msg = options.transform ? options.transform(message) : message;
    options.write(format === 'json' ? JSON.stringify({ ts: now().toISOString(), level, msg }) : `${TEXT_PREFIX[level]}${msg}`);
  };
  return {
    error: (m) => emit('error', m),
    warn: (m) => emit('warn', m),
    info: (m) => emit('info', m),
    debug: (m) => emit('debug', m),
    enabled: (level) => RANK[level] <= max,
  };
}

/** The same logger with `transform` applied to every message first (the worker's redaction). */
export function mapLogger(logger: Logger, transform: (message: string) => string): Logger {
  return {
    error: (m) => logger.error(transform(m)),
    warn: (m) => logger.warn(transform(m)),
    info: (m) => logger.info(transform(m)),
    debug: (m) => logger.debug(transform(m)),
    enabled: (level) => logger.enabled(level),
  };
}

/** The level named by a flag or $TOOLCANON_LOG_LEVEL, or undefined when it names none. */
export function parseLogLevel(value: string): LogLevel | undefined {
  const v = value.trim().toLowerCase();
  const alias = v === 'warning' ? 'warn' : v;
  return (LOG_LEVELS as readonly string[]).includes(alias) ? (alias as LogLevel) : undefined;
}

/** Where a component's lines go: a Logger, or a plain line function (a text logger at info). */
export type LogTarget = Logger | ((line: string) => void);

export function asLogger(target: LogTarget | undefined): Logger {
  if (target === undefined) return createLogger({ write: (line) => process.stderr.write(`${line}\n`) });
  return typeof target === 'function' ? createLogger({ write: target }) : target;
}
