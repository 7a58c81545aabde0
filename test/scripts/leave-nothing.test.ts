// Issue 29 item 13: the tests leave nothing running or lying around.
// - `npm run kafka:stop` (scripts/kafka.sh stop) also stops the OTLP receiver the export tests
//   start (scripts/otlp-receiver.sh), which it left running before. Run on a copy of the scripts
//   in a folder of its own (their state lives under <root>/.cache), with a stand-in process whose
//   command line is the one the receiver script recognises as its own ("OtlpReceiver <port>"),
//   so no JVM, no Maven and no real broker or receiver of this checkout is touched.
// - Every test file that makes a temporary directory removes it (a static check over test/).
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('leave-nothing');
afterAll(() => tmp.cleanup());

describe('the tests leave nothing running (issue 29 item 13)', () => {
  it('scripts/kafka.sh stop stops the OTLP receiver too', async () => {
    const root = join(tmp.dir, 'checkout');
    mkdirSync(join(root, 'scripts', 'lib'), { recursive: true });
    for (const f of ['scripts/kafka.sh', 'scripts/otlp-receiver.sh', 'scripts/lib/service.sh']) copyFileSync(join(ROOT, f), join(root, f));
    // A port of its own: the stand-in is recognised by it, never this checkout's receiver.
    const port = String(20_000 + (process.pid % 20_000));
    const standIn = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'OtlpReceiver', port], { stdio: 'ignore' });
    const exited = new Promise<void>((done) => standIn.once('exit', () => done()));
    try {
      const pid = standIn.pid;
      expect(pid).toBeDefined();
      mkdirSync(join(root, '.cache', 'otlp-receiver'), { recursive: true });
      writeFileSync(join(root, '.cache', 'otlp-receiver', 'receiver.pid'), `${pid}\n`);
      const env = { ...process.env, OTLP_RECEIVER_PORT: port, KAFKA_PORT: String(Number(port) + 1) };
      const status = spawnSync('bash', [join(root, 'scripts/otlp-receiver.sh'), 'status'], { env, encoding: 'utf8' });
      expect(status.status, `${status.stderr}: the receiver script must see the stand-in as its receiver`).toBe(0);

      const stop = spawnSync('bash', [join(root, 'scripts/kafka.sh'), 'stop'], { env, encoding: 'utf8', timeout: 60_000 });
      expect(stop.status, stop.stderr).toBe(0);
      expect(stop.stderr).toContain('kafka.sh: not running');
      expect(stop.stderr).toContain(`otlp-receiver.sh: stopped (pid ${pid})`);
      await Promise.race([exited, new Promise((_r, reject) => setTimeout(() => reject(new Error('the OTLP receiver stand-in is still running')), 15_000))]);
      expect(existsSync(join(root, '.cache', 'otlp-receiver', 'receiver.pid'))).toBe(false);

      // Stopping again: nothing runs, exit 0.
      const again = spawnSync('bash', [join(root, 'scripts/kafka.sh'), 'stop'], { env, encoding: 'utf8', timeout: 60_000 });
      expect(again.status, again.stderr).toBe(0);
      expect(again.stderr).toContain('otlp-receiver.sh: not running');
    } finally {
      if (standIn.exitCode === null && standIn.signalCode === null) standIn.kill('SIGKILL');
    }
  });

  it('every test file that makes a temporary directory removes it', () => {
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.ts')) files.push(path);
      }
    };
    walk(join(ROOT, 'test'));
    const leaks: string[] = [];
    for (const file of files) {
      const rel = relative(ROOT, file);
      if (rel === 'test/helpers/db.ts') continue; // makeTempDir itself: its callers are checked below
      const text = readFileSync(file, 'utf8');
      // A directory made directly must be removed in the same file.
      if (/\bmkdtemp(Sync)?\(/.test(text) && !/\brm(Sync)?\(/.test(text)) leaks.push(`${rel}: mkdtemp without rm`);
      // One made by the helper must have its cleanup called (or handed to the Kafka tests' release).
      if (/\b(makeTempDir|openTempSink)\(/.test(text) && !/\.cleanup\b|\bcleanup(\?\.)?\(|releaseKafkaTest\(|removeWhileInUse\(/.test(text)) leaks.push(`${rel}: makeTempDir without cleanup`);
    }
    expect(leaks).toEqual([]);
  });
});
