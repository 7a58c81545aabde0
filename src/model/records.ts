// Internal records the pipeline writes: one zod schema each (record-schemas.ts, loaded where rows
// are checked: zod costs ~70 ms of every process that loads it), the TypeScript types inferred from it.
import type { z } from 'zod';
import type { deadLetterRowSchema, toolCallRowSchema } from './record-schemas.ts';
import type { CANONICAL_FIELDS, Harness } from '../canonical/meta.ts';

/** Why an input event could not become an analytics row (the closed list of dead-letter reasons). */
export const DEAD_LETTER_REASONS = [
  'oversized',
  'invalid_utf8',
  'too_deep',
  'invalid_json',
  'unknown_harness',
  'schema',
  /** A raw record of a harness log that an importer could not read (detail names the problem). */
  'import_malformed',
] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

/** Flags on a stored row: the event was kept, but something about it is worth counting. */
export const ROW_FLAGS = [
  'uncatalogued',
  'bad_mcp_name',
  'use_tool_without_tool_name',
  'input_not_json',
  'input_not_object',
  'canonical_type_mismatch',
  'canonical_out_of_range',
  /** Secrets in the event were replaced by [REDACTED:kind:hash] markers (count in redactions). */
  'redacted',
  /** The event names no model (model ''): unknown, never guessed; reports say "unknown". */
  'model_unknown',
] as const;
export type RowFlag = (typeof ROW_FLAGS)[number];

export type ToolCallRow = z.infer<typeof toolCallRowSchema>;
export type DeadLetterRow = z.infer<typeof deadLetterRowSchema>;

// Compile-time check that the row carries one column per canonical field.
type MissingCanonicalColumn = Exclude<(typeof CANONICAL_FIELDS)[number], keyof ToolCallRow>;
const noMissingCanonicalColumn: [MissingCanonicalColumn] extends [never] ? true : never = true;
void noMissingCanonicalColumn;

/** A usage record as decoded (token figures exact, as bigint; null where the harness gave none). */
export interface UsageRecord {
  readonly event_id: string;
  readonly ts: string;
  readonly harness: Harness;
  readonly session_id: string;
  readonly agent_id: string;
  readonly host: string;
  readonly device_id: string;
  readonly turn_id: string;
  readonly model: string;
  readonly request_id: string;
  readonly input_tokens: bigint;
  readonly output_tokens: bigint;
  readonly cache_read_tokens: bigint | null;
  readonly cache_write_tokens: bigint | null;
  readonly reasoning_tokens: bigint | null;
  readonly context_window_tokens: bigint | null;
  readonly source: string;
  readonly ingested_at: string;
}
