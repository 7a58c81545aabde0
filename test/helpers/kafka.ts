// Test access to a real Kafka broker.
//
// ensureKafka() uses $KAFKA_BROKERS when set (comma-separated host:port list); otherwise,
// when java (and mvn, or an already cached classpath) is available, it starts the repo's
// single-node KRaft broker with `bash scripts/kafka.sh start` (idempotent, serialised by a
// lock, so parallel test files share one broker). The broker is left running after the tests:
// stop it with `bash scripts/kafka.sh stop`.
//
// requireKafkaOrSkip() turns the result into broker addresses or null (skip). Under CI=true a
// skip is an error: a suite that silently skipped its broker tests must not pass CI.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type KafkaAvailability = { brokers: string[] } | { skip: string };

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = 'scripts/kafka.sh';
// Keep in step with KAFKA_VERSION's default in scripts/kafka.sh.
const DEFAULT_KAFKA_VERSION = '3.9.1';
const START_TIMEOUT_MS = 300_000; // first start may resolve the classpath with Maven

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], timeoutMs: number): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd: ROOT, timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr: error !== null && stderr === '' ? error.message : stderr });
      },
    );
  });
}

async function onPath(command: string): Promise<boolean> {
  const result = await run('bash', ['-c', 'command -v "$1"', 'bash', command], 10_000);
  return result.code === 0;
}

export function parseBrokers(list: string): string[] {
  return list
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
}

async function startLocalBroker(): Promise<KafkaAvailability> {
  if (!(await onPath('java'))) {
    return { skip: 'KAFKA_BROKERS is not set and java is not on PATH (needed for scripts/kafka.sh)' };
  }
  const version = process.env['KAFKA_VERSION'] ?? DEFAULT_KAFKA_VERSION;
  const cached = existsSync(`${ROOT}.cache/kafka/${version}/resolved`);
  if (!cached && !(await onPath('mvn'))) {
    return {
      skip: 'KAFKA_BROKERS is not set, mvn is not on PATH and no cached Kafka classpath exists in .cache/kafka/',
    };
  }
  const result = await run('bash', [SCRIPT, 'start'], START_TIMEOUT_MS);
  const line = result.stdout
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith('KAFKA_BROKERS='));
  if (result.code !== 0 || line === undefined) {
    const tail = result.stderr.trim().split('\n').slice(-15).join('\n');
    return { skip: `bash ${SCRIPT} start failed (exit ${result.code}):\n${tail}` };
  }
  const brokers = parseBrokers(line.slice('KAFKA_BROKERS='.length));
  return brokers.length > 0 ? { brokers } : { skip: `bash ${SCRIPT} start printed no broker address` };
}

let pending: Promise<KafkaAvailability> | undefined;

/** Broker addresses to test against, or why there are none. Memoised per process. */
export function ensureKafka(): Promise<KafkaAvailability> {
  const fromEnv = process.env['KAFKA_BROKERS'];
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    const brokers = parseBrokers(fromEnv);
    if (brokers.length > 0) return Promise.resolve({ brokers });
  }
  pending ??= startLocalBroker();
  return pending;
}

/**
 * The broker list, or null when the Kafka tests should be skipped. Under CI=true a skip
 * throws instead (so the test file fails); locally it prints a loud warning banner.
 */
export function requireKafkaOrSkip(result: KafkaAvailability, suite = 'Kafka tests'): string[] | null {
  if ('brokers' in result) return result.brokers;
  if (process.env['CI'] === 'true') {
    throw new Error(`${suite} cannot run under CI=true: ${result.skip}`);
  }
  const bar = '!'.repeat(78);
  console.warn(
    `\n${bar}\n!! SKIPPING ${suite}: no Kafka broker.\n!! ${result.skip.split('\n').join('\n!! ')}\n` +
      `!! Set KAFKA_BROKERS=host:port, or install java + maven and run: bash ${SCRIPT} start\n${bar}\n`,
  );
  return null;
}
