// How the Kafka client authenticates (SASL) and encrypts (TLS), from the environment and files
// only: argv is readable by every user of the machine, so `--brokers` refuses credentials. No
// kafkajs here: client.ts turns this into the client's options.
import { ConfigError, readPemFile, registerSecret, secretFromEnv } from '../config/secrets.ts';

export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

export interface KafkaSecurity {
  readonly sasl?: { readonly mechanism: SaslMechanism; readonly username: string; readonly password: string };
  /** TLS to the brokers: system CAs unless `ca` is given; a client certificate when `cert` and `key` are. */
  readonly ssl?: { readonly ca?: Buffer; readonly cert?: Buffer; readonly key?: Buffer; readonly passphrase?: string };
}

const ENV = {
  mechanism: 'TOOLCANON_KAFKA_SASL_MECHANISM',
  username: 'TOOLCANON_KAFKA_SASL_USERNAME',
  password: 'TOOLCANON_KAFKA_SASL_PASSWORD',
  ssl: 'TOOLCANON_KAFKA_SSL',
  ca: 'TOOLCANON_KAFKA_SSL_CA_FILE',
  cert: 'TOOLCANON_KAFKA_SSL_CERT_FILE',
  key: 'TOOLCANON_KAFKA_SSL_KEY_FILE',
  keyPassword: 'TOOLCANON_KAFKA_SSL_KEY_PASSWORD',
} as const;

function set(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

/**
 * SASL and TLS settings from the environment:
 * - `$TOOLCANON_KAFKA_SASL_MECHANISM` (plain, scram-sha-256, scram-sha-512) with
 *   `$TOOLCANON_KAFKA_SASL_USERNAME` and `$TOOLCANON_KAFKA_SASL_PASSWORD` or the file
 *   `$TOOLCANON_KAFKA_SASL_PASSWORD_FILE`;
 * - `$TOOLCANON_KAFKA_SSL=1` for TLS, with optional `$TOOLCANON_KAFKA_SSL_CA_FILE`,
 *   `$TOOLCANON_KAFKA_SSL_CERT_FILE` + `$TOOLCANON_KAFKA_SSL_KEY_FILE` (PEM; a CA, certificate or
 *   key file implies TLS) and `$TOOLCANON_KAFKA_SSL_KEY_PASSWORD[_FILE]` for an encrypted key.
 * Anything incomplete or unreadable is a ConfigError naming the variable (never a value).
 */
export function kafkaSecurityFromEnv(env: NodeJS.ProcessEnv = process.env): KafkaSecurity {
  const out: { sasl?: NonNullable<KafkaSecurity['sasl']>; ssl?: NonNullable<KafkaSecurity['ssl']> } = {};
  const mechanism = set(env, ENV.mechanism)?.toLowerCase();
  const username = set(env, ENV.username);
  const password = secretFromEnv(ENV.password, env);
  if (mechanism !== undefined) {
    if (!(SASL_MECHANISMS as readonly string[]).includes(mechanism)) {
      throw new ConfigError(`$${ENV.mechanism} must be one of ${SASL_MECHANISMS.join(', ')}, got ${JSON.stringify(env[ENV.mechanism])}`);
    }
    if (username === undefined) throw new ConfigError(`$${ENV.mechanism} is set: set $${ENV.username} too`);
    if (password === undefined) throw new ConfigError(`$${ENV.mechanism} is set: set $${ENV.password} or $${ENV.password}_FILE too`);
    out.sasl = { mechanism: mechanism as SaslMechanism, username, password };
  } else if (username !== undefined || password !== undefined) {
    throw new ConfigError(`a Kafka SASL user or password is set without $${ENV.mechanism} (${SASL_MECHANISMS.join(', ')})`);
  }

  const sslFlag = set(env, ENV.ssl);
  if (sslFlag !== undefined && !/^(?:1|0|true|false|yes|no)$/i.test(sslFlag)) throw new ConfigError(`$${ENV.ssl} must be 1 or 0, got ${JSON.stringify(sslFlag)}`);
  const ca = set(env, ENV.ca);
  const cert = set(env, ENV.cert);
  const key = set(env, ENV.key);
  if ((cert === undefined) !== (key === undefined)) throw new ConfigError(`set both $${ENV.cert} and $${ENV.key} (a client certificate needs its key), or neither`);
  const files = ca !== undefined || cert !== undefined;
  if (sslFlag !== undefined && /^(?:0|false|no)$/i.test(sslFlag) && files) throw new ConfigError(`$${ENV.ssl} is ${sslFlag} but TLS files are set ($${ENV.ca}, $${ENV.cert}, $${ENV.key})`);
  if ((sslFlag !== undefined && /^(?:1|true|yes)$/i.test(sslFlag)) || files) {
    const passphrase = secretFromEnv(ENV.keyPassword, env);
    registerSecret(passphrase);
    out.ssl = {
      ...(ca === undefined ? {} : { ca: readPemFile(ENV.ca, ca) }),
      ...(cert === undefined ? {} : { cert: readPemFile(ENV.cert, cert) }),
      ...(key === undefined ? {} : { key: readPemFile(ENV.key, key) }),
      ...(passphrase === undefined ? {} : { passphrase }),
    };
  }
  return out;
}

/** What a message may say about the security settings: the mechanism and whether TLS is on, never a value. */
export function describeSecurity(security: KafkaSecurity | undefined): string {
  const parts: string[] = [];
  if (security?.sasl) parts.push(`SASL ${security.sasl.mechanism.toUpperCase()}`);
  if (security?.ssl) parts.push('TLS');
  return parts.length ? parts.join(' over ') : 'plaintext';
}

/**
 * `--brokers` (or `$TOOLCANON_KAFKA_BROKERS`) must be `host:port` each: a user or password there
 * (`user:pass@host:9092`, `sasl://user:pass@host:9092`) is refused without repeating it.
 */
export function brokerListHasCredentials(value: string): boolean {
  return value.includes('@');
}
