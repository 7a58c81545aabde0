// An envelope event as typed fields (what an importer makes), before any text: the pipeline
// decodes it as it is (event.ts decodeEnvelope); its line is made only where one is needed.
import type { ToolCallEvent, UsageEvent } from './envelope-types.ts';

/**
 * A tool_call's fields as an importer gives them: the envelope's own (envelope-types.ts, from the
 * schema) but the input, which goes beside them as text (RawToolInput), and the machine, which
 * the import adds; the event id is always given (importers derive it from the harness's ids).
 */
export type ToolCallFields = Omit<ToolCallEvent, 'schema' | 'type' | 'host' | 'device_id' | 'input' | 'event_id'> & { readonly event_id: string };

/**
 * The raw input: `json` is the verbatim JSON text of an object as the harness logged it;
 * `string` is input the harness logged as a string (JSON-in-a-string, or freeform text).
 */
export type RawToolInput = { readonly json: string } | { readonly string: string };

/** A usage event's fields as an importer gives them (as ToolCallFields). */
export type UsageFields = Omit<UsageEvent, 'schema' | 'type' | 'host' | 'device_id' | 'event_id'> & { readonly event_id: string };

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
  /** About the characters of `text` (what a batch counts it as), known without making it. */
  readonly chars: number;
}
