// Generated Claude Code transcripts of a chosen size, for the streaming tests and
// bench/import-stream.ts: each turn is a prompt, a response streamed over two lines (text, then a
// tool_use, sharing message.id and requestId, the second with the final output count) and the
// tool_result with an output of `outputBytes`, every tenth call an error, every 50th unanswered.
import { closeSync, openSync, writeSync } from 'node:fs';

export interface GeneratedTranscript {
  readonly bytes: number;
  readonly turns: number;
  /** Distinct responses (usage events) and tool calls: the events the importer emits. */
  readonly events: number;
}

const SESSION = '7f3c2a10-0000-4000-8000-000000000001';

/** Writes a transcript of at least `targetBytes` to `path`. */
export function writeClaudeTranscript(path: string, targetBytes: number, outputBytes = 6000): GeneratedTranscript {
  const fd = openSync(path, 'w');
  const filler = 'abcdefghij klmnopqrst uvwxyz 0123456789 '.repeat(Math.ceil(outputBytes / 40)).slice(0, outputBytes);
  let bytes = 0;
  let turns = 0;
  let pending: string[] = [];
  const write = (record: unknown): void => {
    pending.push(JSON.stringify(record));
    if (pending.length >= 256) flush();
  };
  const flush = (): void => {
    if (pending.length === 0) return;
    const text = `${pending.join('\n')}\n`;
    writeSync(fd, text);
    bytes += Buffer.byteLength(text);
    pending = [];
  };
  try {
    const base = Date.parse('2026-11-02T09:00:00.000Z');
    while (bytes + pending.reduce((n, l) => n + l.length + 1, 0) < targetBytes) {
      const t = turns++;
      const at = (s: number): string => new Date(base + t * 10_000 + s * 1000).toISOString();
      const msg = `msg_${String(t).padStart(8, '0')}`;
      const req = `req_${String(t).padStart(8, '0')}`;
      const tool = `toolu_${String(t).padStart(8, '0')}`;
      const usage = (out: number): unknown => ({ input_tokens: 3, cache_creation_input_tokens: 120 + (t % 50), cache_read_input_tokens: 20_000 + t, output_tokens: out });
      const common = { sessionId: SESSION, isSidechain: false, cwd: '/work/repo', version: '2.1.30' };
      write({ type: 'user', uuid: `u-${t}`, timestamp: at(0), message: { role: 'user', content: `step ${t}: run the tests` }, ...common });
      write({ type: 'assistant', uuid: `a-${t}-1`, timestamp: at(1), requestId: req, message: { model: 'claude-opus-4-6', id: msg, type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Running them.' }], usage: usage(9) }, ...common });
      write({ type: 'assistant', uuid: `a-${t}-2`, timestamp: at(2), requestId: req, message: { model: 'claude-opus-4-6', id: msg, type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: tool, name: t % 3 === 0 ? 'Read' : 'Bash', input: { command: `npm test -- --shard ${t}` } }], usage: usage(40 + (t % 7)) }, ...common });
      if (t % 50 === 49) continue;
      write({ type: 'user', uuid: `r-${t}`, timestamp: at(5), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: tool, content: `${filler}\nexit ${t % 10 === 0 ? 1 : 0}`, is_error: t % 10 === 0 }] }, ...common });
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return { bytes, turns, events: turns * 2 };
}
