// SIGTERM while the worker is still starting: a broker that accepts connections and never
// answers keeps kafkajs waiting (30 s request timeout, then retries). The stop must not wait for
// that: the worker stops within its shutdown bound and the process exits, instead of lingering
// until the client gives up. No real broker is needed for this one.
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';
import { WorkerProcess } from '../helpers/worker.ts';

const SHUTDOWN_TIMEOUT_MS = 1_500;
/** Shutdown bound, plus the 5 s a consume process may linger after its worker stopped, plus slack. */
const EXIT_BOUND_MS = SHUTDOWN_TIMEOUT_MS + 5_000 + 4_000;

describe('a stop during a start that waits for Kafka', () => {
  const tmp = makeTempDir('slow-start');
  const sockets: Socket[] = [];
  let server: Server;
  let port: number;
  let worker: WorkerProcess;
  let exit: { code: number | null; signal: NodeJS.Signals | null };
  let stopMs: number;

  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.push(socket); // accepted, read, never answered
      socket.on('data', () => undefined);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    worker = new WorkerProcess('slow-start', [
      '--brokers', `127.0.0.1:${port}`,
      '--topic', 'never-answered',
      '--db', join(tmp.dir, 'db'),
      '--shutdown-timeout-ms', String(SHUTDOWN_TIMEOUT_MS),
      '--format', 'json',
    ]);
    // The engine is open and the client is waiting on the silent broker.
    await new Promise<void>((resolve, reject) => {
      const check = setInterval(() => {
        if (sockets.length > 0) {
          clearInterval(check);
          setTimeout(resolve, 500);
        }
      }, 50);
      setTimeout(() => {
        clearInterval(check);
        reject(new Error(`the worker never connected; stderr:\n${worker.lines.join('\n')}`));
      }, 60_000);
    });
    const started = performance.now();
    worker.kill('SIGTERM');
    exit = await worker.exited;
    stopMs = performance.now() - started;
  }, 120_000);

  afterAll(async () => {
    worker?.kill('SIGKILL');
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    tmp.cleanup();
  });

  it('exits within the shutdown bound, not when the client gives up', () => {
    expect(exit.signal).toBeNull();
    expect(stopMs).toBeLessThan(EXIT_BOUND_MS);
  });

  it('says it stopped, with nothing consumed and nothing left behind', () => {
    expect(worker.lines.some((l) => l.startsWith('Stopping (SIGTERM)'))).toBe(true);
    expect(worker.lines.some((l) => l.startsWith('Stopped: consumed=0'))).toBe(true);
    expect(worker.summary()['events_consumed']).toBe(0);
    expect(exit.code).toBe(0);
  });
});
