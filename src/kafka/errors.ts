// Kafka client failures as one line that says what to do, matched by the client's error names
// (no kafkajs import: the CLI describes failures without loading the client).

interface KafkaishError {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly broker?: unknown;
  readonly code?: unknown;
  readonly cause?: unknown;
  readonly originalError?: unknown;
}

/** The error and its causes, outermost first (kafkajs wraps retries: NumberOfRetriesExceeded -> Connection error). */
function chain(error: unknown): KafkaishError[] {
  const out: KafkaishError[] = [];
  for (let e = error as KafkaishError | undefined; e && out.length < 10; e = (e.cause ?? e.originalError) as KafkaishError | undefined) {
    if (typeof e !== 'object') break;
    out.push(e);
  }
  return out;
}

const BROKERS_HINT = 'is it running, and are --brokers (or $TOOLCANON_KAFKA_BROKERS) right?';
const SECURITY_HINT = '$TOOLCANON_KAFKA_SASL_MECHANISM, $TOOLCANON_KAFKA_SASL_USERNAME and $TOOLCANON_KAFKA_SASL_PASSWORD (or _FILE)';

/** One line for a Kafka client failure, or undefined when the error is not one. */
export function describeKafkaFailure(error: unknown): string | undefined {
  const errors = chain(error);
  if (!errors.some((e) => String(e.name ?? '').startsWith('KafkaJS'))) return undefined;
  const text = errors.map((e) => String(e.message ?? '')).join(' | ');
  const broker = errors.map((e) => e.broker).find((b) => typeof b === 'string') as string | undefined
    ?? /(?:ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|getaddrinfo \w+) ([^\s,)]+)/.exec(text)?.[1];
  const at = broker ? ` at ${broker}` : '';
  if (errors.some((e) => e.name === 'KafkaJSSASLAuthenticationError') || /SASL .*authentication failed/i.test(text)) {
    return `the Kafka broker${at} refused the SASL credentials: check ${SECURITY_HINT}`;
  }
  if (/UNSUPPORTED_SASL_MECHANISM|unsupported SASL mechanism/i.test(text)) {
    return `the Kafka broker${at} does not offer this SASL mechanism: check $TOOLCANON_KAFKA_SASL_MECHANISM (plain, scram-sha-256, scram-sha-512) against the broker's sasl.enabled.mechanisms`;
  }
  if (/ILLEGAL_SASL_STATE|SaslHandshake|Request is not valid given the current SASL state/i.test(text)) {
    return `the Kafka broker${at} is not expecting SASL on this listener: point --brokers at its SASL listener, or unset $TOOLCANON_KAFKA_SASL_MECHANISM`;
  }
  if (/ECONNREFUSED/.test(text)) return `cannot reach the Kafka broker${at} (connection refused): ${BROKERS_HINT}`;
  if (/ENOTFOUND|EAI_AGAIN/.test(text)) return `cannot reach the Kafka broker${at} (its host name does not resolve): are --brokers (or $TOOLCANON_KAFKA_BROKERS) right?`;
  if (/certificate|SSL|TLS|EPROTO|wrong version number/i.test(text)) {
    return `TLS with the Kafka broker${at} failed (${(/[^|]*(?:certificate|SSL|TLS|EPROTO|wrong version number)[^|]*/i.exec(text)?.[0] ?? 'handshake').trim()}): is $TOOLCANON_KAFKA_SSL right for this listener, and $TOOLCANON_KAFKA_SSL_CA_FILE the broker's CA?`;
  }
  if (/Connection timeout|Request timed out|ETIMEDOUT/i.test(text)) return `the Kafka broker${at} did not answer in time: ${BROKERS_HINT} (a TLS or SASL listener given as plaintext also looks like this)`;
  if (/Closed connection|ECONNRESET|Connection error/i.test(text)) return `the Kafka broker${at} closed the connection: ${BROKERS_HINT} (a TLS or SASL listener given as plaintext, or the reverse, also looks like this)`;
  return undefined;
}
