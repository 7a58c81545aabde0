// The dead_letters table: One row per input that could not be read: its raw bytes (redacted), the reason, the origin. No event time and no harness: only --host scopes it.
import { deadLetterRowSchema } from '../model/records.ts';
import type { DeadLetterRow } from '../model/records.ts';
import { defineTable } from './table.ts';

export const deadLetters = defineTable<DeadLetterRow>()({
  name: 'dead_letters',
  row: deadLetterRowSchema,
  columns: {
    dead_letter_id: 'String',
    raw_base64: 'String EPHEMERAL',
    raw_bytes: 'UInt64',
    reason: 'LowCardinality(String)',
    detail: 'String',
    source: 'String',
    ingested_at: "DateTime64(3, 'UTC')",
    redactions: 'UInt32 DEFAULT 0',
    host: "LowCardinality(String) DEFAULT ''",
    device_id: "LowCardinality(String) DEFAULT ''",
  },
  computed: {
    raw: 'String DEFAULT base64Decode(raw_base64)',
  },
  engine: 'ReplacingMergeTree(ingested_at)',
  orderBy: '(dead_letter_id)',
  retention: 'ingested_at',
  scope: 'host',
  dumpSelect: '* EXCEPT (dead_letter_id, source, ingested_at, raw), hex(raw) AS raw_hex',
});
