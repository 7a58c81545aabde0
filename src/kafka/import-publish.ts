// `toolcanon import <harness> --to-kafka`: a machine publishes the envelope events its importer
// reads from the local logs to a topic instead of writing a local database; a consume worker
// elsewhere writes the warehouse. Each event carries the importing machine (host, device_id)
// unless it names its own, is redacted before it leaves the machine, and is keyed by its
// session (one session stays on one partition, in order). Incremental as a local import: the
// import state (a file per importer in the state directory) advances only once the broker
// acknowledged every event of the files it records. A record the topic cannot take, and a raw
// record the importer could not read, go to the dead-letter topic with its file:line.
import type { Machine } from '../decode/event.ts';
import { withMachine } from '../importers/machine.ts';
import { readImport, type ImportOptions, type ImportReading, type ImportTarget } from '../pipeline/import.ts';
import { fileImportState } from '../pipeline/import-state-file.ts';
import type { Importer } from '../importers/types.ts';
import { redactLine } from '../redact/redact.ts';
import type { StreamProducer } from './client.ts';
import { DLQ_MACHINE_HEADERS, RecordPublisher, sessionKeyOf, type PublishOptions, type PublishResult } from './publish.ts';

export interface ImportPublishOptions extends PublishOptions {
  /** The importing machine, set on every event that names none. */
  readonly machine: Machine;
  /** The import state directory (what was read of each file). */
  readonly stateDir: string;
  /** Reading options of the import (progress, chunk sizes). */
  readonly reading?: Omit<ImportOptions, 'machine' | 'limits' | 'accounting' | 'batch'>;
}

export interface ImportPublishSummary {
  readonly reading: ImportReading;
  readonly publish: PublishResult;
  /** Secrets replaced in the events and dead letters before they were published. */
  readonly secretsRedacted: number;
}

export async function publishImport(importer: Importer, paths: readonly string[], producer: StreamProducer, options: ImportPublishOptions): Promise<ImportPublishSummary> {
  const publishing = importPublishTarget(producer, options);
  const reading = await readImport(importer, paths, fileImportState(options.stateDir), publishing.target, options.reading ?? {});
  return { reading, publish: publishing.publisher.result, secretsRedacted: publishing.secretsRedacted() };
}

/**
 * The target an import's reading publishes through (also `watch --to-kafka`'s, across its
 * cycles): each event with the importing machine, redacted, keyed by its session; each malformed
 * record to the dead-letter topic.
 */
export function importPublishTarget(producer: StreamProducer, options: Omit<ImportPublishOptions, 'stateDir' | 'reading'>): { target: ImportTarget; publisher: RecordPublisher; secretsRedacted: () => number } {
  const publisher = new RecordPublisher(producer, options);
  const redact = options.redact !== false;
  let secretsRedacted = 0;
  const redacted = (text: string): string => {
    if (!redact) return text;
    const r = redactLine(text);
    secretsRedacted += r.count;
    return r.text;
  };
  const machineHeaders = { [DLQ_MACHINE_HEADERS.host]: options.machine.host, [DLQ_MACHINE_HEADERS.deviceId]: options.machine.device_id };
  const target: ImportTarget = {
    addEvent: (line, source) => {
      // Redacted as the decoder would redact it, before it leaves the machine (the ids in the
      // line were derived from the logs as read, so they do not change).
      const value = Buffer.from(redacted(withMachine(line.text, options.machine)), 'utf8');
      return publisher.add(value, sessionKeyOf(value), source);
    },
    // The raw bytes are redacted by the publisher (as every dead letter); the detail here.
    addMalformed: (raw, detail, source) => publisher.addDeadLetter(raw, null, source, 'import_malformed', redacted(detail), machineHeaders),
    due: () => publisher.flush(),
    flush: () => publisher.flush(),
  };
  return { target, publisher, secretsRedacted: () => secretsRedacted };
}
