// Generated Codex rollouts of a chosen size, for the streaming tests and bench/import-stream.ts,
// shaped like the corpus's 0.4x envelope files: a session_meta, then per turn a turn_context, a
// reasoning item, a token_count, a shell function_call and its output of `outputBytes` (a 0.4x
// `{"output","metadata":{"exit_code","duration_seconds"}}` string; every tenth call exits 1,
// every 50th has no output), and a second token_count. Each turn is one usage event and one
// call (a turn's two token_counts: the second repeats the first total only every 7th turn).
import { closeSync, openSync, writeSync } from 'node:fs';

export interface GeneratedRollout {
  readonly bytes: number;
  readonly turns: number;
  /** Usage events (changed totals) and tool calls: the events the importer emits. */
  readonly events: number;
  readonly sessionId: string;
}

export const GENERATED_CODEX_SESSION = '0199cee2-0000-7000-8000-00000000c0de';

/** The file name Codex gives a rollout of the generated session. */
export const GENERATED_CODEX_FILE = `rollout-2025-10-10T01-09-47-${GENERATED_CODEX_SESSION}.jsonl`;

/** Writes a rollout of at least `targetBytes` to `path`. */
export function writeCodexRollout(path: string, targetBytes: number, outputBytes = 6000): GeneratedRollout {
  const fd = openSync(path, 'w');
  const filler = 'abcdefghij klmnopqrst uvwxyz 0123456789\n'.repeat(Math.ceil(outputBytes / 40)).slice(0, outputBytes);
  let bytes = 0;
  let turns = 0;
  let events = 0;
  let pending: string[] = [];
  let pendingBytes = 0;
  const base = Date.parse('2025-10-10T01:09:47.000Z');
  const write = (ms: number, type: string, payload: unknown): void => {
    const line = JSON.stringify({ timestamp: new Date(base + ms).toISOString(), type, payload });
    pending.push(line);
    pendingBytes += Buffer.byteLength(line) + 1;
    if (pending.length >= 256) flush();
  };
  const flush = (): void => {
    if (pending.length === 0) return;
    writeSync(fd, `${pending.join('\n')}\n`);
    bytes += pendingBytes;
    pending = [];
    pendingBytes = 0;
  };
  const totals = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0, total_tokens: 0 };
  try {
    write(0, 'session_meta', { id: GENERATED_CODEX_SESSION, timestamp: new Date(base).toISOString(), cwd: '/work/repo', originator: 'codex_cli_rs', cli_version: '0.41.0' });
    while (bytes + pendingBytes < targetBytes) {
      const t = turns++;
      const at = t * 10_000;
      const callId = `call_${String(t).padStart(10, '0')}`;
      write(at, 'turn_context', { cwd: '/work/repo', approval_policy: 'on-request', model: 'gpt-5-codex', summary: 'auto' });
      write(at + 100, 'response_item', { type: 'reasoning', summary: [{ type: 'summary_text', text: `**Step ${t}**` }], content: null });
      totals.input_tokens += 17_000 + (t % 97);
      totals.cached_input_tokens += 16_000;
      totals.output_tokens += 40 + (t % 13);
      totals.reasoning_output_tokens += 16;
      totals.total_tokens = totals.input_tokens + totals.output_tokens;
      const info = { total_token_usage: { ...totals }, last_token_usage: { ...totals }, model_context_window: 272_000 };
      write(at + 200, 'event_msg', { type: 'token_count', info });
      events++;
      write(at + 200, 'response_item', { type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', `npm test -- --shard ${t}`], workdir: '/work/repo' }), call_id: callId });
      events++;
      if (t % 50 !== 49) {
        const output = JSON.stringify({ output: `${filler}exit ${t % 10 === 0 ? 1 : 0}`, metadata: { exit_code: t % 10 === 0 ? 1 : 0, duration_seconds: 1.5 } });
        write(at + 1700, 'response_item', { type: 'function_call_output', call_id: callId, output });
      }
      // The second total repeats the first every 7th turn (a repeat adds nothing).
      const repeat = t % 7 === 0;
      if (!repeat) totals.output_tokens += 5;
      write(at + 1800, 'event_msg', { type: 'token_count', info: { ...info, total_token_usage: { ...totals } } });
      if (!repeat) events++;
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return { bytes, turns, events, sessionId: GENERATED_CODEX_SESSION };
}
