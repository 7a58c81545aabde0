// The event ids of Claude Code's calls and API responses, shared by the two importers that see
// them: the transcript (claude-code) and the OpenTelemetry export (otlp). The same call or
// request read from both gets the same id, so the tables keep one row of it.
import { stableEventId } from '../envelope.ts';

const HARNESS = 'claude_code';

/**
 * A tool call: the session and the `tool_use` id (the transcript's `tool_use.id`, OTel's
 * `tool_use_id`). Not the agent: OTel's log events do not name it, and a tool_use id is unique.
 */
export function claudeCodeCallEventId(sessionId: string, toolUseId: string): string {
  return stableEventId(HARNESS, sessionId, toolUseId);
}

/**
 * An API response's usage: the session and the Anthropic request id (the transcript's
 * `requestId`, OTel's `request_id`). A transcript line without a request id (older builds)
 * keeps the id of its message instead: (message.id, '') as before request ids were joined.
 */
export function claudeCodeUsageEventId(sessionId: string, requestId: string, messageId = ''): string {
  return requestId === '' ? stableEventId(HARNESS, messageId, requestId) : stableEventId(HARNESS, sessionId, 'usage', requestId);
}
