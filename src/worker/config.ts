// The stream worker's settings, every one with a default and its unit in the name.
import { DEFAULT_ACCOUNTING, type AccountingConfig } from '../accounting/session.ts';
import { DEFAULT_LIMITS, type DecodeLimits } from '../decode/event.ts';
import type { BackoffPolicy } from './backoff.ts';
import type { KafkaSecurity } from '../kafka/security.ts';

export interface WorkerConfig {
  /** Bootstrap brokers, `host:port` each. */
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly groupId: string;
  readonly clientId: string;
  /** Where poison records go; `<topic>.dlq` by default. */
  readonly dlqTopic: string;
  /** Flush when this many events are buffered. */
  readonly batchMaxRows: number;
  /** Flush when the buffered events hold this many bytes of record values. */
  readonly batchMaxBytes: number;
  /** Flush when the oldest buffered event has waited this long. */
  readonly batchMaxWaitMs: number;
  readonly limits: DecodeLimits;
  /** Token accounting (threshold, headroom, model table), as for replay. */
  readonly accounting: AccountingConfig;
  /** Backoff between attempts while ClickHouse (or the dead-letter topic) fails. */
  readonly retry: BackoffPolicy;
  /** Longest a SIGTERM/SIGINT shutdown may take before the worker gives up on its last flush. */
  readonly shutdownTimeoutMs: number;
  /** Interval of the progress line on stderr; 0 turns it off. */
  readonly progressIntervalMs: number;
  /** A new group (no committed offset) starts at the earliest record when true, else at new records only. */
  readonly fromBeginning: boolean;
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly rebalanceTimeoutMs: number;
  /** Longest the broker holds an empty fetch; also bounds how long stopping waits for a fetch. */
  readonly fetchMaxWaitMs: number;
  readonly fetchMaxBytes: number;
  readonly fetchMaxBytesPerPartition: number;
  /** SASL / TLS to the brokers (from the environment, never flags); plaintext when absent. */
  readonly security?: KafkaSecurity;
}

export const WORKER_DEFAULTS = {
  groupId: 'toolcanon',
  batchMaxRows: 20_000,
  batchMaxBytes: 32 * 1024 * 1024,
  batchMaxWaitMs: 1_000,
  retry: { initialMs: 500, maxMs: 30_000 },
  shutdownTimeoutMs: 30_000,
  progressIntervalMs: 10_000,
  fromBeginning: true,
  sessionTimeoutMs: 30_000,
  rebalanceTimeoutMs: 60_000,
  fetchMaxWaitMs: 500,
  fetchMaxBytes: 4 * 1024 * 1024,
  fetchMaxBytesPerPartition: 1024 * 1024,
  limits: DEFAULT_LIMITS,
  accounting: DEFAULT_ACCOUNTING,
} as const;

/** A heartbeat a third of the session timeout (kafkajs's advice), at most every 3 s. */
export function heartbeatIntervalFor(sessionTimeoutMs: number): number {
  return Math.max(500, Math.min(3_000, Math.floor(sessionTimeoutMs / 3)));
}
