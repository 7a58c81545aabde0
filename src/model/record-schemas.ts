// The zod schemas of the records the pipeline writes (records.ts infers their types from them).
// Loaded only where rows are checked (tests, a table's row): zod costs ~70 ms of a process's start.
import { z } from 'zod';
import { HARNESSES, TOOL_KINDS, TOOL_NAMESPACES } from '../canonical/meta.ts';
import { DEAD_LETTER_REASONS, ROW_FLAGS } from './records.ts';

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
