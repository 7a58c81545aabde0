// `toolcanon import <harness> --to-kafka`: the importer's events published to a topic (see
// src/kafka/import-publish.ts), and the importing machine's flags shared with a local import.
// Loaded for every import (the machine flags); the Kafka client only with --to-kafka.
import type { KafkaAdmin, StreamProducer } from '../kafka/client.ts';
import type { Machine } from '../decode/event.ts';
import { defaultImportStateDir, importingMachine, MachineError } from '../importers/machine.ts';
import type { Importer } from '../importers/types.ts';
import { ImportStateError } from '../pipeline/import-state-file.ts';
import { importProblem, type VerdictOptions } from '../pipeline/import-verdict.ts';
import { defaultDlqTopic } from '../kafka/dlq.ts';
import { renderRows, type OutputFormat } from './format.ts';
import { UsageError, type Io } from './io.ts';

export interface ImportMachineFlags {
  readonly host?: string | undefined;
  readonly 'device-id'?: string | undefined;
  readonly 'state-dir'?: string | undefined;
}

export interface ImportKafkaFlags extends ImportMachineFlags {
  readonly brokers?: string | undefined;
  readonly topic?: string | undefined;
  readonly 'dlq-topic'?: string | undefined;
  readonly partitions?: string | undefined;
  readonly db?: string | undefined;
  readonly clickhouse?: string | undefined;
}

/** The import state directory of the flags (--state-dir, else $TOOLCANON_IMPORT_STATE, else ~/.toolcanon/import-state). */
export function stateDirFrom(flags: ImportMachineFlags): string {
  return flags['state-dir'] ?? defaultImportStateDir();
}

/** The importing machine from --host / --device-id, the environment, then the machine itself. */
export function importMachineFrom(flags: ImportMachineFlags): Machine {
  try {
    return importingMachine({ host: flags.host, deviceId: flags['device-id'], stateDir: stateDirFrom(flags) });
  } catch (error) {
    if (error instanceof MachineError) throw new UsageError(error.message);
    throw error;
  }
}

/** What `--to-kafka` judges of what it read: the files' harness, not the share of malformed records (those go to the DLQ topic). */
const KAFKA_VERDICT: VerdictOptions = { malformed: false };

export async function runImportToKafka(importer: Importer, targets: readonly string[], flags: ImportKafkaFlags, machine: Machine, io: Io, format: OutputFormat, redact: boolean, allowDeadLetters = false): Promise<number> {
  const [{ createKafkaClient }, { kafkaSecurityFromEnv }, { brokersFrom, loggerFrom, topicFrom }] = await Promise.all([
    import('../kafka/client.ts'),
    import('../kafka/security.ts'),
    import('./kafka-commands.ts'),
  ]);
  if (flags.db !== undefined || flags.clickhouse !== undefined) throw new UsageError('import --to-kafka writes no database: --db and --clickhouse do not apply (a consume worker writes the warehouse)');
  const brokers = brokersFrom(flags.brokers, 'import --to-kafka');
  const topic = topicFrom(flags.topic, 'import --to-kafka');
  const dlqTopic = flags['dlq-topic'] === undefined ? defaultDlqTopic(topic) : topicFrom(flags['dlq-topic'], 'import --to-kafka', 'dlq-topic');
  if (dlqTopic === topic) throw new UsageError(`--dlq-topic must differ from --topic (both are ${JSON.stringify(topic)})`);
  const partitionsText = flags.partitions ?? '6';
  if (!/^[1-9][0-9]*$/.test(partitionsText)) throw new UsageError(`--partitions must be a positive integer, got ${JSON.stringify(partitionsText)}`);
  const partitions = Number(partitionsText);
  const stateDir = stateDirFrom(flags);
  const log = loggerFrom(undefined, undefined, io);
  const { publishImport } = await import('../kafka/import-publish.ts');
  const client = createKafkaClient({ brokers, clientId: `toolcanon-import-${process.pid}`, log, security: kafkaSecurityFromEnv() });
  let admin: KafkaAdmin | undefined;
  let producer: StreamProducer | undefined;
  try {
    admin = await client.admin();
    if (await admin.ensureTopic(topic, { partitions })) log.info(`Created topic ${topic} (${partitions} partition(s)).`);
    const maxMessageBytes = await admin.maxMessageBytes(topic);
    producer = await client.producer();
    log.info(`Importing ${importer.id} logs from ${targets.join(', ')} to Kafka topic ${topic} as host ${JSON.stringify(machine.host)}, device ${machine.device_id} (state in ${stateDir})`);
    const started = performance.now();
    const s = await publishImport(importer, targets, producer, {
      topic,
      dlqTopic,
      admin,
      redact,
      machine,
      stateDir,
      ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
      log: (line) => log.info(line),
      // A refused run records nothing: the next one reads the same files and refuses them again.
      reading: { recordIf: (r) => allowDeadLetters || importProblem(importer, targets, r, KAFKA_VERDICT) === undefined },
      onDeadLetter: (d) => log.warn(`${d.source}: ${d.detail}; sent to the DLQ topic ${d.dlqTopic} as ${d.reason}`),
    });
    const elapsedMs = performance.now() - started;
    const r = s.reading;
    const p = s.publish;
    const byReason = (reason: string): number => p.deadLettered.filter((d) => d.reason === reason).length;
    const rows = [
      { metric: 'files_seen', value: r.filesSeen },
      { metric: 'files_read', value: r.filesRead },
      { metric: 'files_unchanged', value: r.filesUnchanged },
      { metric: 'records_read', value: r.recordsRead },
      { metric: 'events_emitted', value: r.eventsEmitted },
      { metric: 'events_already_imported', value: r.eventsAlreadyImported },
      { metric: 'malformed_records', value: r.malformedRecords },
      ...Object.entries(r.skippedRecords).sort().map(([type, n]) => ({ metric: `skipped_records.${type}`, value: n })),
      { metric: 'records_published', value: p.published },
      { metric: 'bytes_published', value: p.bytesPublished },
      { metric: 'dead_lettered.oversized', value: byReason('oversized') },
      { metric: 'dead_lettered.import_malformed', value: byReason('import_malformed') },
      { metric: 'secrets_redacted', value: s.secretsRedacted },
      { metric: 'elapsed_ms', value: Math.round(elapsedMs) },
    ];
    io.out(renderRows(rows, format));
    // Every event and malformed record read is on the topic or in the dead-letter topic.
    const handed = r.eventsEmitted + r.malformedRecords;
    if (p.published + p.deadLettered.length !== handed) {
      io.err(`toolcanon: ${handed - p.published - p.deadLettered.length} of ${handed} record(s) were neither published nor dead-lettered.`);
      return 1;
    }
    // What a local import says of logs that are not the harness's, said the same way.
    const problem = allowDeadLetters ? undefined : importProblem(importer, targets, r, KAFKA_VERDICT);
    if (problem !== undefined) {
      io.err(`toolcanon: ${problem}`);
      return 1;
    }
    return 0;
  } catch (error) {
    if (error instanceof ImportStateError) {
      io.err(`toolcanon: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await producer?.disconnect().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
  }
}
