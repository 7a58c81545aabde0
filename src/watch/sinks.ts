// Where `watch` writes: a database (embedded or a server) through one BatchWriter kept for the
// whole run (its accounting carries over from cycle to cycle, as within one import) and the
// database's import_files; or a Kafka topic through the publisher `import --to-kafka` uses and
// its state file.
import type { Machine, DecodeLimits } from '../decode/event.ts';
import type { AccountingConfig } from '../accounting/session.ts';
import { BatchWriter, emptyCounts, writerTarget, type BatchLimits, type PipelineCounts } from '../pipeline/batch-writer.ts';
import { databaseImportState } from '../pipeline/import.ts';
import { fileImportState } from '../pipeline/import-state-file.ts';
import { importPublishTarget, type ImportPublishOptions } from '../kafka/import-publish.ts';
import type { PublishResult } from '../kafka/publish.ts';
import type { StreamProducer } from '../kafka/client.ts';
import type { ClickHouseSink } from '../sink/clickhouse.ts';
import type { FollowSink } from './follow.ts';

export interface DatabaseFollowOptions {
  readonly machine: Machine;
  readonly limits: DecodeLimits;
  readonly accounting?: AccountingConfig;
  readonly batch?: BatchLimits;
}

/** The database as watch's sink: what the pipeline stored over the run is `counts`. */
export function databaseFollowSink(sink: ClickHouseSink, o: DatabaseFollowOptions): { follow: FollowSink; counts: PipelineCounts } {
  const counts = emptyCounts();
  const newWriter = (): BatchWriter => new BatchWriter(sink, counts, o.batch, o.accounting);
  let writer = newWriter();
  // Events that name no machine get the importing one (the decoder's fallback), as runImport does.
  const limits: DecodeLimits = { ...o.limits, machine: o.machine };
  return {
    counts,
    follow: {
      cycleTarget: (ingestedAt) => writerTarget(writer, ingestedAt, limits),
      // A new writer: its accounting is rebuilt from what is stored (counts only ever counted what
      // was acknowledged), as after a restart; the failed cycle's files are read again.
      reset: () => {
        writer = newWriter();
      },
      state: databaseImportState(sink, o.machine.device_id),
    },
  };
}

/** A Kafka topic as watch's sink: the publisher of `import --to-kafka` and its state directory. */
export function kafkaFollowSink(producer: StreamProducer, o: Omit<ImportPublishOptions, 'reading'>): { follow: FollowSink; result: PublishResult; secretsRedacted: () => number } {
  const publishing = importPublishTarget(producer, o);
  return {
    result: publishing.publisher.result,
    secretsRedacted: publishing.secretsRedacted,
    follow: { cycleTarget: () => publishing.target, state: fileImportState(o.stateDir) },
  };
}
