// Internal records the pipeline writes: one zod schema each, the TypeScript types inferred from it.
import { z } from 'zod';
import { type CANONICAL_FIELDS, HARNESSES, TOOL_KINDS, TOOL_NAMESPACES, type Harness } from '../canonical/meta.ts';

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

const nullableText = z.string().nullable();
/** Int64 columns travel as decimal text so values beyond 2^53 stay exact. */
const nullableInt64Text = z.string().regex(/^-?[0-9]+$/).nullable();

export const toolCallRowSchema = z.object({
  event_id: z.string(),
  ts: z.string(),
  harness: z.enum(HARNESSES),
  namespace: z.enum(TOOL_NAMESPACES),
  session_id: z.string(),
  /** The subagent inside the session ('' for the main agent). */
  agent_id: z.string(),
  /** The machine the event was recorded on and a stable id of it ('' when unknown; see machine.ts). */
  host: z.string(),
  device_id: z.string(),
  turn_id: z.string(),
  call_id: z.string(),
  model: z.string(),
  tool_name: z.string(),
  kind: z.enum(TOOL_KINDS),
  label: z.string(),
  read_only: z.boolean(),
  meta_version: z.number().int(),
  canonical_input: z.string(),
  path: nullableText,
  offset: nullableInt64Text,
  limit: nullableInt64Text,
  command: nullableText,
  description: nullableText,
  cwd: nullableText,
  directory: nullableText,
  pattern: nullableText,
  raw_input: z.string(),
  status: z.enum(['ok', 'error', 'pending']),
  error: z.string(),
  duration_ms: z.number().int().nonnegative().nullable(),
  images: z.number().int().nonnegative(),
  via: z.enum(['direct', 'use_tool']),
  mcp_server: z.string(),
  mcp_tool: z.string(),
  flags: z.array(z.enum(ROW_FLAGS)),
  /** Secrets replaced in the stored texts of the row (0 with --no-redact). */
  redactions: z.number().int().nonnegative(),
  input_bytes: z.number().int().nonnegative(),
  output_bytes: z.number().int().nonnegative(),
  source: z.string(),
  ingested_at: z.string(),
});
export type ToolCallRow = z.infer<typeof toolCallRowSchema>;

export const deadLetterRowSchema = z.object({
  dead_letter_id: z.string(),
  /** The bytes as received (secrets redacted), written as they are into the table's String column. */
  raw: z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'bytes'),
  raw_bytes: z.number().int().nonnegative(),
  reason: z.enum(DEAD_LETTER_REASONS),
  detail: z.string(),
  source: z.string(),
  ingested_at: z.string(),
  /** Secrets replaced in the stored bytes and detail. */
  redactions: z.number().int().nonnegative(),
  /** The machine the record came from: the importing machine, or the event's own fields when it could be read ('' when unknown). */
  host: z.string(),
  device_id: z.string(),
});
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
