// A consumed batch as a record source (src/source/record.ts): each record, as consumed, at its
// topic/partition/offset, in offset order, until `stopped` says the consumer's generation is over.
import type { RecordSource } from '../source/record.ts';
import type { ConsumedBatch, ConsumedRecord } from './client.ts';

/** Where a Kafka record is: what the offset ledger tracks and a poison record's dead letter names. */
export interface TopicPosition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

export function batchRecords(batch: ConsumedBatch, stopped: () => boolean): RecordSource<ConsumedRecord, TopicPosition> {
  return {
    async read(take) {
      const { topic, partition } = batch;
      for (const record of batch.records) {
        if (stopped()) return;
        const wait = take.event(record, { topic, partition, offset: record.offset });
        if (wait) await wait;
      }
    },
  };
}
