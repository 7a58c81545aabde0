// An envelope event as typed fields (what an importer makes), before any text: the pipeline
// decodes it as it is (event.ts decodeEnvelope); its line is made only where one is needed.
import type { Harness } from '../canonical/meta.ts';

export interface ToolCallFields {
  readonly event_id: string;
  readonly ts: string;
  readonly harness: Harness;
  readonly session_id: string;
  /** A subagent with a context window of its own; omit for the main agent. */
  readonly agent_id?: string;
  /** Optional in envelope v1 (the row stores ''), as `model` is: runtimes without turns exist. */
  readonly turn_id?: string;
  readonly call_id: string;
  readonly model?: string;
  readonly tool: string;
  readonly status: 'ok' | 'error' | 'pending';
  readonly output?: string;
  readonly error?: string;
  readonly duration_ms?: number;
  readonly images?: number;
}

/**
 * The raw input: `json` is the verbatim JSON text of an object as the harness logged it;
 * `string` is input the harness logged as a string (JSON-in-a-string, or freeform text).
 */
export type RawToolInput = { readonly json: string } | { readonly string: string };

export interface UsageFields {
  readonly event_id: string;
  readonly ts: string;
  readonly harness: Harness;
  readonly session_id: string;
  readonly agent_id?: string;
  readonly turn_id?: string;
  readonly model?: string;
  readonly request_id: string;
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_read_tokens?: number;
  readonly cache_write_tokens?: number;
  readonly reasoning_tokens?: number;
  readonly context_window_tokens?: number;
}

/** An envelope event as typed fields. */
export type EnvelopeEvent =
  | { readonly type: 'tool_call'; readonly fields: ToolCallFields; readonly input: RawToolInput }
  | { readonly type: 'usage'; readonly fields: UsageFields }
  /** An event made as its line (an MCP lifecycle event, which is decoded from its text). */
  | { readonly type: 'line'; readonly line: string };

/** A typed event with its line on demand (src/importers/envelope.ts Envelope). */
export interface TypedEvent {
  readonly event: EnvelopeEvent;
  /** Its toolcanon.event/v1 line. */
  readonly text: string;
  /** At least the UTF-8 bytes of `text`, known without making it. */
  readonly mostBytes: number;
}
