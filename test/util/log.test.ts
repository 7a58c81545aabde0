// The levelled logger (issue 15): ERROR = data was or may be lost, WARN = degraded, INFO =
// progress, DEBUG = kafkajs's chatter; text and JSON lines; kafkajs's lines mapped onto it.
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { loggerFrom } from '../../src/cli/kafka-commands.ts';
import { UsageError } from '../../src/cli/io.ts';
import { createKafkaClient } from '../../src/kafka/client.ts';
import { createLogger, mapLogger, parseLogLevel, type LogLevel } from '../../src/util/log.ts';

function collect(level?: LogLevel, format?: 'text' | 'json'): { lines: string[]; log: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const log = createLogger({ write: (l) => lines.push(l), ...(level ? { level } : {}), ...(format ? { format } : {}), now: () => new Date('2026-12-03T10:00:00.000Z') });
  return { lines, log };
}

function all(log: ReturnType<typeof createLogger>): void {
  log.error('lost');
  log.warn('degraded');
  log.info('progress');
  log.debug('chatter');
}

describe('createLogger', () => {
  it('writes each level and the louder ones; info is the default', () => {
    const byLevel: Record<LogLevel, string[]> = { error: [], warn: [], info: [], debug: [] };
    for (const level of ['error', 'warn', 'info', 'debug'] as const) {
      const { lines, log } = collect(level);
      all(log);
      byLevel[level] = lines;
    }
    expect(byLevel).toEqual({
      error: ['error: lost'],
      warn: ['error: lost', 'warning: degraded'],
      info: ['error: lost', 'warning: degraded', 'progress'],
      debug: ['error: lost', 'warning: degraded', 'progress', 'debug: chatter'],
    });
    const { lines, log } = collect();
    all(log);
    expect(lines).toEqual(byLevel.info);
    expect(log.enabled('info')).toBe(true);
    expect(log.enabled('debug')).toBe(false);
  });

  it('json: one object per line with ts, level and msg, the message byte-equal', () => {
    const { lines, log } = collect('debug', 'json');
    log.warn('a "quoted"\ttab');
    log.debug('x');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { ts: '2026-12-03T10:00:00.000Z', level: 'warn', msg: 'a "quoted"\ttab' },
      { ts: '2026-12-03T10:00:00.000Z', level: 'debug', msg: 'x' },
    ]);
  });

  it('mapLogger applies a transform (the worker redacts) at every level', () => {
    const { lines, log } = collect('debug');
    all(mapLogger(log, (m) => m.toUpperCase()));
    expect(lines).toEqual(['error: LOST', 'warning: DEGRADED', 'PROGRESS', 'debug: CHATTER']);
  });

  it('parseLogLevel takes the four names (and warning), nothing else', () => {
    expect(['error', 'WARN', 'warning', ' info ', 'debug'].map(parseLogLevel)).toEqual(['error', 'warn', 'warn', 'info', 'debug']);
    expect(parseLogLevel('verbose')).toBeUndefined();
    expect(parseLogLevel('')).toBeUndefined();
  });
});

describe('loggerFrom (consume and produce)', () => {
  const io = { out: () => undefined, err: () => undefined, isTty: false };
  it('a flag beats the environment; a bad value is a usage error naming where it came from', () => {
    expect(loggerFrom('debug', undefined, io, { TOOLCANON_LOG_LEVEL: 'error' }).enabled('debug')).toBe(true);
    expect(loggerFrom(undefined, undefined, io, { TOOLCANON_LOG_LEVEL: 'error' }).enabled('warn')).toBe(false);
    expect(loggerFrom(undefined, undefined, io, {}).enabled('info')).toBe(true);
    expect(() => loggerFrom('loud', undefined, io, {})).toThrow(new UsageError('--log-level must be one of error, warn, info, debug, got "loud"'));
    expect(() => loggerFrom(undefined, undefined, io, { TOOLCANON_LOG_LEVEL: 'loud' })).toThrow(new UsageError('$TOOLCANON_LOG_LEVEL must be one of error, warn, info, debug, got "loud"'));
    expect(() => loggerFrom(undefined, 'xml', io, {})).toThrow(new UsageError('--log-format must be one of text, json, got "xml"'));
  });
});

describe("kafkajs's lines on our levels", () => {
  // A port that accepts and closes at once: kafkajs logs the broken connection at its ERROR level.
  let server: Server;
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('a connection kafkajs logs at ERROR is a warning here (the client retries it: nothing lost), and nothing at --log-level error', async () => {
    server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as AddressInfo).port;
    const run = async (level: LogLevel): Promise<string[]> => {
      const { lines, log } = collect(level);
      const client = createKafkaClient({ brokers: [`127.0.0.1:${port}`], clientId: 'log-test', log, connectionTimeoutMs: 500 });
      const admin = client.admin();
      await admin.then((a) => a.disconnect()).catch(() => undefined);
      return lines;
    };
    const warn = await run('warn');
    expect(warn.length).toBeGreaterThan(0);
    expect(warn.every((l) => l.startsWith('warning: kafkajs ['))).toBe(true);
    expect(warn.some((l) => l.startsWith('error: '))).toBe(false);
    expect(await run('error')).toEqual([]);
  }, 120_000);
});
