// Builds envelope lines for tests. Returns text so tests control the exact bytes.

export const BASE_EVENT = {
  schema: 'toolcanon.event/v1',
  type: 'tool_call',
  ts: '2026-12-02T10:00:00.123Z',
  harness: 'claude_code',
  session_id: 's-1',
  turn_id: 't-1',
  call_id: 'c-1',
  model: 'claude-sonnet-4-5',
  tool: 'Read',
  input: { file_path: 'README.md' },
  status: 'ok',
} as const;

/** An envelope line with fields overridden; `rawInput`, when given, is spliced in verbatim. */
export function eventLine(overrides: Record<string, unknown> = {}, rawInput?: string): string {
  const event: Record<string, unknown> = { ...BASE_EVENT, ...overrides };
  if (rawInput === undefined) return JSON.stringify(event);
  event['input'] = '__RAW_INPUT__';
  return JSON.stringify(event).replace('"__RAW_INPUT__"', rawInput);
}

export function bytes(text: string): Uint8Array {
  return Buffer.from(text, 'utf8');
}
