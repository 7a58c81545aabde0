// Issue 10: Kafka credentials (SASL) and TLS come from the environment or files, never argv or
// output. The settings are built and checked here (kafkaSecurityFromEnv, the kafkajs options
// they become); against the real broker (scripts/kafka.sh: a PLAINTEXT listener only, see the
// note below) the CLI shows that the settings reach the client: with SASL set, kafkajs opens
// with a SaslHandshake the plaintext listener refuses; with TLS set, a TLS handshake it cannot
// answer. Neither failure prints the password.
//
// A successful SASL login: scripts/kafka.sh also starts a SASL_PLAINTEXT listener (PLAIN, one
// test user, $KAFKA_SASL_BROKERS, default 127.0.0.1:19094); `consume` through it with the right
// password (from a file) writes and commits every record, with a wrong one it stops at once with
// one line. Not tested here: a TLS login (the broker has no SSL listener).
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, forgetSecrets, hasUrlUserinfo, registerSecret, scrubSecrets } from '../../src/config/secrets.ts';
import { securityOptions } from '../../src/kafka/client.ts';
import { kafkaSecurityFromEnv } from '../../src/kafka/security.ts';
import { makeTempDir } from '../helpers/db.ts';
import { cli, metrics, startCli } from '../helpers/faults.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import { generateEvents, keyedRecords, sendAll, testClient, uniqueName, waitForAllCommitted, workerArgs } from '../helpers/worker.ts';

const PASSWORD = 'kafka-Pw-91b2c7d0-never-print';
const tmp = makeTempDir('kafka-creds');
afterAll(() => tmp.cleanup());
const file = (name: string, text: string): string => {
  const p = join(tmp.dir, name);
  writeFileSync(p, text, { mode: 0o600 });
  return p;
};
const PEM = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';

describe('Kafka SASL and TLS settings from the environment', () => {
  it('nothing set: plaintext, no options', () => {
    expect(kafkaSecurityFromEnv({})).toEqual({});
    expect(securityOptions(kafkaSecurityFromEnv({}))).toEqual({});
  });

  it('SASL with the password in a variable or a file (one trailing newline dropped), every mechanism', () => {
    const pwFile = file('kafka-pw', `${PASSWORD}\n`);
    for (const mechanism of ['plain', 'scram-sha-256', 'SCRAM-SHA-512']) {
      const fromVar = kafkaSecurityFromEnv({ TOOLCANON_KAFKA_SASL_MECHANISM: mechanism, TOOLCANON_KAFKA_SASL_USERNAME: 'svc', TOOLCANON_KAFKA_SASL_PASSWORD: PASSWORD });
      const fromFile = kafkaSecurityFromEnv({ TOOLCANON_KAFKA_SASL_MECHANISM: mechanism, TOOLCANON_KAFKA_SASL_USERNAME: 'svc', TOOLCANON_KAFKA_SASL_PASSWORD_FILE: pwFile });
      const expected = { mechanism: mechanism.toLowerCase(), username: 'svc', password: PASSWORD };
      expect(fromVar).toEqual({ sasl: expected });
      expect(fromFile).toEqual({ sasl: expected });
      expect(securityOptions(fromFile)).toEqual({ sasl: expected });
    }
  });

  it('TLS: on by $TOOLCANON_KAFKA_SSL=1 (system CAs) or by a CA / client certificate file', () => {
    expect(securityOptions(kafkaSecurityFromEnv({ TOOLCANON_KAFKA_SSL: '1' }))).toEqual({ ssl: true });
    const ca = file('ca.pem', PEM);
    const cert = file('cert.pem', PEM);
    const key = file('key.pem', '-----BEGIN PRIVATE KEY-----\nfake\n-----END PRIVATE KEY-----\n');
    const tls = kafkaSecurityFromEnv({ TOOLCANON_KAFKA_SSL_CA_FILE: ca, TOOLCANON_KAFKA_SSL_CERT_FILE: cert, TOOLCANON_KAFKA_SSL_KEY_FILE: key, TOOLCANON_KAFKA_SSL_KEY_PASSWORD: 'key-pass' });
    const options = securityOptions(tls);
    expect(options.ssl).toEqual({ ca: [Buffer.from(PEM)], cert: Buffer.from(PEM), key: expect.any(Buffer), passphrase: 'key-pass' });
    const both = securityOptions(kafkaSecurityFromEnv({ TOOLCANON_KAFKA_SSL: 'true', TOOLCANON_KAFKA_SASL_MECHANISM: 'scram-sha-256', TOOLCANON_KAFKA_SASL_USERNAME: 'svc', TOOLCANON_KAFKA_SASL_PASSWORD: PASSWORD }));
    expect(both).toEqual({ ssl: true, sasl: { mechanism: 'scram-sha-256', username: 'svc', password: PASSWORD } });
  });

  it('anything incomplete or unreadable is one ConfigError naming the variable, never a value', () => {
    const missing = join(tmp.dir, 'no-such-file');
    const dir = join(tmp.dir, 'a-dir');
    mkdirSync(dir);
    const cases: Array<[NodeJS.ProcessEnv, string]> = [
      [{ TOOLCANON_KAFKA_SASL_MECHANISM: 'gssapi', TOOLCANON_KAFKA_SASL_USERNAME: 'svc', TOOLCANON_KAFKA_SASL_PASSWORD: PASSWORD }, '$TOOLCANON_KAFKA_SASL_MECHANISM must be one of plain, scram-sha-256, scram-sha-512, got "gssapi"'],
      [{ TOOLCANON_KAFKA_SASL_MECHANISM: 'plain', TOOLCANON_KAFKA_SASL_PASSWORD: PASSWORD }, '$TOOLCANON_KAFKA_SASL_MECHANISM is set: set $TOOLCANON_KAFKA_SASL_USERNAME too'],
      [{ TOOLCANON_KAFKA_SASL_MECHANISM: 'plain', TOOLCANON_KAFKA_SASL_USERNAME: 'svc' }, '$TOOLCANON_KAFKA_SASL_MECHANISM is set: set $TOOLCANON_KAFKA_SASL_PASSWORD or $TOOLCANON_KAFKA_SASL_PASSWORD_FILE too'],
      [{ TOOLCANON_KAFKA_SASL_USERNAME: 'svc', TOOLCANON_KAFKA_SASL_PASSWORD: PASSWORD }, 'a Kafka SASL user or password is set without $TOOLCANON_KAFKA_SASL_MECHANISM (plain, scram-sha-256, scram-sha-512)'],
      [{ TOOLCANON_KAFKA_SASL_MECHANISM: 'plain', TOOLCANON_KAFKA_SASL_USERNAME: 'svc', TOOLCANON_KAFKA_SASL_PASSWORD: PASSWORD, TOOLCANON_KAFKA_SASL_PASSWORD_FILE: missing }, 'set $TOOLCANON_KAFKA_SASL_PASSWORD or $TOOLCANON_KAFKA_SASL_PASSWORD_FILE, not both'],
      [{ TOOLCANON_KAFKA_SASL_MECHANISM: 'plain', TOOLCANON_KAFKA_SASL_USERNAME: 'svc', TOOLCANON_KAFKA_SASL_PASSWORD_FILE: missing }, `$TOOLCANON_KAFKA_SASL_PASSWORD_FILE: cannot read ${missing}: no such file`],
      [{ TOOLCANON_KAFKA_SASL_MECHANISM: 'plain', TOOLCANON_KAFKA_SASL_USERNAME: 'svc', TOOLCANON_KAFKA_SASL_PASSWORD_FILE: dir }, `$TOOLCANON_KAFKA_SASL_PASSWORD_FILE: cannot read ${dir}: it is a directory`],
      [{ TOOLCANON_KAFKA_SSL_CA_FILE: missing }, `$TOOLCANON_KAFKA_SSL_CA_FILE: cannot read ${missing}: no such file`],
      [{ TOOLCANON_KAFKA_SSL_CERT_FILE: file('c.pem', PEM) }, 'set both $TOOLCANON_KAFKA_SSL_CERT_FILE and $TOOLCANON_KAFKA_SSL_KEY_FILE (a client certificate needs its key), or neither'],
      [{ TOOLCANON_KAFKA_SSL: '0', TOOLCANON_KAFKA_SSL_CA_FILE: file('ca2.pem', PEM) }, '$TOOLCANON_KAFKA_SSL is 0 but TLS files are set ($TOOLCANON_KAFKA_SSL_CA_FILE, $TOOLCANON_KAFKA_SSL_CERT_FILE, $TOOLCANON_KAFKA_SSL_KEY_FILE)'],
      [{ TOOLCANON_KAFKA_SSL: 'maybe' }, '$TOOLCANON_KAFKA_SSL must be 1 or 0, got "maybe"'],
    ];
    for (const [env, message] of cases) {
      let thrown: unknown;
      try {
        kafkaSecurityFromEnv(env);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, message).toBeInstanceOf(ConfigError);
      expect((thrown as Error).message).toBe(message);
      expect((thrown as Error).message).not.toContain(PASSWORD);
    }
  });

  it('scrubbing: a registered secret and a URL user:password@ never survive into printed text', () => {
    forgetSecrets();
    registerSecret(PASSWORD);
    registerSecret('ab'); // too short to scrub safely (it would mangle words): left alone
    expect(scrubSecrets(`SASL failed for ${PASSWORD}; see https://svc:${PASSWORD}@broker.example:9093/x and ab`)).toBe('SASL failed for ***; see https://broker.example:9093/x and ab');
    expect(hasUrlUserinfo('http://u:p@h')).toBe(true);
    expect(hasUrlUserinfo('http://h:8123/db')).toBe(false);
    forgetSecrets();
  });
});

describe('the CLI: never credentials in argv, and none in its output', () => {
  const saslEnv = { ...process.env, TOOLCANON_KAFKA_SASL_MECHANISM: 'plain', TOOLCANON_KAFKA_SASL_USERNAME: 'svc-kafka', TOOLCANON_KAFKA_SASL_PASSWORD: PASSWORD };

  it('--brokers (or $TOOLCANON_KAFKA_BROKERS) with user:password@ is refused without repeating it', async () => {
    const line = 'toolcanon: --brokers must be host:port[,host:port…] without a user or password: set $TOOLCANON_KAFKA_SASL_MECHANISM, $TOOLCANON_KAFKA_SASL_USERNAME and $TOOLCANON_KAFKA_SASL_PASSWORD (or $TOOLCANON_KAFKA_SASL_PASSWORD_FILE) instead';
    for (const args of [['produce', 'fixtures/codex', '--topic', 't'], ['consume', '--topic', 't']]) {
      for (const brokers of [`svc:${PASSWORD}@127.0.0.1:9092`, `sasl_ssl://svc:${PASSWORD}@127.0.0.1:9093`]) {
        const r = await cli([...args, '--brokers', brokers]);
        expect(r.code, `${args[0]} ${brokers}`).toBe(2);
        expect(r.stderr.split('\n')[0]).toBe(line);
        expect(r.stdout + r.stderr).not.toContain(PASSWORD);
      }
    }
    const fromEnv = await cli(['produce', 'fixtures/codex', '--topic', 't'], { ...process.env, TOOLCANON_KAFKA_BROKERS: `svc:${PASSWORD}@127.0.0.1:9092` });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr.split('\n')[0]).toBe(line.replace('--brokers', '$TOOLCANON_KAFKA_BROKERS'));
    expect(fromEnv.stdout + fromEnv.stderr).not.toContain(PASSWORD);
  });

  it('a missing password file stops produce and consume before they connect: one line, exit 2', async () => {
    const missing = join(tmp.dir, 'gone');
    const env = { ...saslEnv, TOOLCANON_KAFKA_SASL_PASSWORD: '', TOOLCANON_KAFKA_SASL_PASSWORD_FILE: missing };
    for (const args of [['produce', 'fixtures/codex', '--topic', 't', '--brokers', '127.0.0.1:1'], ['consume', '--topic', 't', '--brokers', '127.0.0.1:1', '--db', join(tmp.dir, 'db')]]) {
      const r = await cli(args, env);
      expect(r.code, args[0]).toBe(2);
      expect(r.stderr.trim()).toBe(`toolcanon: $TOOLCANON_KAFKA_SASL_PASSWORD_FILE: cannot read ${missing}: no such file`);
    }
  });
});

const brokers = requireKafkaOrSkip(await ensureKafka(), 'test/faults/kafka-credentials.test.ts');

describe.skipIf(brokers === null)('against the real broker (PLAINTEXT listener): the settings reach the client', () => {
  it('SASL set: the client opens with a SaslHandshake, the listener refuses it; one last line, no password anywhere', async () => {
    const env = { ...process.env, TOOLCANON_KAFKA_SASL_MECHANISM: 'scram-sha-256', TOOLCANON_KAFKA_SASL_USERNAME: 'svc-kafka', TOOLCANON_KAFKA_SASL_PASSWORD: PASSWORD };
    const r = await cli(['produce', 'fixtures/codex', '--brokers', (brokers ?? []).join(','), '--topic', uniqueName('tc-sasl')], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('SaslHandshake');
    expect(r.stderr.trim().split('\n').at(-1)).toBe('toolcanon: the Kafka broker is not expecting SASL on this listener: point --brokers at its SASL listener, or unset $TOOLCANON_KAFKA_SASL_MECHANISM');
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
  });

  it('TLS set: a TLS handshake the plaintext listener cannot answer; one last line saying so', async () => {
    const r = await cli(['produce', 'fixtures/codex', '--brokers', (brokers ?? []).join(','), '--topic', uniqueName('tc-tls')], { ...process.env, TOOLCANON_KAFKA_SSL: '1' });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(/^toolcanon: TLS with the Kafka broker at [^ ]+ failed \(.*TLS.*\): is \$TOOLCANON_KAFKA_SSL right for this listener, and \$TOOLCANON_KAFKA_SSL_CA_FILE the broker's CA\?$/);
  });
});

/** The SASL listener of scripts/kafka.sh, when it answers (a broker started before it had one does not). */
async function saslListener(): Promise<{ brokers: string } | { skip: string }> {
  const brokers = process.env['KAFKA_SASL_BROKERS'] ?? '127.0.0.1:19094';
  const [host, port] = brokers.split(',')[0]?.split(':') ?? [];
  const open = await new Promise<boolean>((resolve) => {
    const socket = connect({ host: host ?? '127.0.0.1', port: Number(port) }, () => (socket.destroy(), resolve(true)));
    socket.on('error', () => resolve(false));
    socket.setTimeout(3_000, () => (socket.destroy(), resolve(false)));
  });
  return open ? { brokers } : { skip: `no SASL listener at ${brokers} (restart the broker with this checkout's scripts/kafka.sh, or set KAFKA_SASL_BROKERS)` };
}

const sasl = brokers === null ? null : requireKafkaOrSkip(await saslListener().then((r) => ('brokers' in r ? { brokers: [r.brokers] } : r)), 'the SASL login tests of test/faults/kafka-credentials.test.ts');
const SASL_USER = 'toolcanon-test';
// scripts/kafka.sh's test account (KAFKA_SASL_TEST_PASSWORD there).
const SASL_PASSWORD = process.env['KAFKA_SASL_TEST_PASSWORD'] ?? 'toolcanon-test-secret';

describe.skipIf(sasl === null)('against the real broker (SASL_PLAINTEXT listener, PLAIN): a login', () => {
  const saslBrokers = sasl ?? [];
  const env = (password: string): NodeJS.ProcessEnv => ({
    ...process.env,
    TOOLCANON_KAFKA_SASL_MECHANISM: 'plain',
    TOOLCANON_KAFKA_SASL_USERNAME: SASL_USER,
    TOOLCANON_KAFKA_SASL_PASSWORD: '',
    TOOLCANON_KAFKA_SASL_PASSWORD_FILE: file(`pw-${password.length}`, `${password}\n`),
  });

  it('the right password: consume through SASL writes and commits every record, and prints no password', async () => {
    const topic = uniqueName('tc-sasl-ok');
    const group = uniqueName('g-sasl');
    const client = testClient(brokers ?? [], 'sasl-test');
    const admin = await client.admin();
    try {
      await admin.ensureTopic(topic, { partitions: 2 });
      const events = generateEvents('sasl', 300);
      await sendAll(client, topic, keyedRecords(events.lines));
      const run = startCli(['consume', ...workerArgs(saslBrokers, topic, group, join(tmp.dir, 'sasl-db'))], env(SASL_PASSWORD));
      try {
        await waitForAllCommitted(admin, group, topic, 90_000);
      } finally {
        run.child.kill('SIGTERM');
      }
      const { code } = await run.exited;
      expect(code, run.stderr).toBe(0);
      const m = metrics(run.stdout);
      expect(m['events_consumed']).toBe(300);
      expect(m['rows_written.tool_calls']).toBe(300);
      expect(m['events_committed']).toBe(300);
      expect(run.stderr).toContain(`Consuming ${topic} as group ${group}`);
      expect(run.stdout + run.stderr).not.toContain(SASL_PASSWORD);
    } finally {
      await admin.deleteTopics([topic, `${topic}.dlq`]).catch(() => undefined);
      await admin.disconnect();
    }
  });

  it('a wrong password: one line saying the broker refused the credentials, exit 1, neither password printed', async () => {
    const wrong = `${SASL_PASSWORD}-wrong-${PASSWORD}`;
    const started = Date.now();
    const r = await cli(['consume', ...workerArgs(saslBrokers, uniqueName('tc-sasl-bad'), uniqueName('g-sasl-bad'), join(tmp.dir, 'sasl-bad-db'))], env(wrong));
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr.trim().split('\n').at(-1)).toBe(`toolcanon: the Kafka broker refused the SASL credentials: check $TOOLCANON_KAFKA_SASL_MECHANISM, $TOOLCANON_KAFKA_SASL_USERNAME and $TOOLCANON_KAFKA_SASL_PASSWORD (or _FILE)`);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(r.stdout + r.stderr).not.toContain(SASL_PASSWORD);
    console.info(`[kafka-credentials] a wrong SASL password stopped consume after ${Date.now() - started} ms`);
  });
});
