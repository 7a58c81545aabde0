// The dead_letters table: One row per input that could not be read: its raw bytes (redacted), the reason, the origin. No event time and no harness: only --host scopes it.
import type { DeadLetterRow } from '../model/records.ts';
import { defineTable } from './table.ts';

export const deadLetters = defineTable<DeadLetterRow>()({
  name: 'dead_letters',
  row: async () => (await import('../model/record-schemas.ts')).deadLetterRowSchema,
  columns: {
    dead_letter_id: 'String',
    // The bytes themselves (a Native String); the base64 default serves rows inserted as text before.
    raw: 'String DEFAULT base64Decode(raw_base64)',
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
    // What inserts of base64 text named (versions before issue 31's long-line work); none does now.
    raw_base64: 'String EPHEMERAL',
  },
  engine: 'ReplacingMergeTree(ingested_at)',
  orderBy: '(dead_letter_id)',
  retention: 'ingested_at',
  scope: 'host',
  dumpSelect: '* EXCEPT (dead_letter_id, source, ingested_at, raw), hex(raw) AS raw_hex',
});
