// Turns one Aider chat history (`.aider.chat.history.md`, Markdown appended line by line) into
// toolcanon events: a usage per `> Tokens: …` line (one per LLM call; **rounded** figures: aider
// prints `3.2k`, so every row is flagged `approximate` through USAGE_CONVENTIONS.aider), and a
// tool_call per action aider logs (`> Applied edit to <file>`: edit; `> Running <command>`: shell;
// `> Commit <sha> <message>`: commit) — aider has no tool calls in the LLM sense. A session is a
// `# aider chat started at <local time>` header; a turn is a `#### ` input block. Every event is
// handed out at its own line; a `> Tokens:` line that does not read is a malformed record.
import { stableEventId, type ToolCallFields, toolCallEnvelopeWithin, usageEnvelope } from '../envelope.ts';
import { MAX_ID_CHARS } from '../json.ts';
import { MalformedStream, type RawLine } from '../lines.ts';
import { parseLinesWith } from '../stream.ts';
import type { ImportOutput, LineParser, LineReading, ParsedFile } from '../types.ts';
import { projectOf } from './paths.ts';

const SESSION_HEADER = /^# aider chat started at (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})\s*$/;
const MAIN_MODEL = /^> (?:Main model|Model): (\S+)/;
const TOKENS = /^> Tokens: (.*)$/;
const FIGURE = /^([\d.,]+)(k?) (sent|received|cache write|cache hit)$/;

/** A figure as aider prints it (`format_tokens`: below 1000 exact, `1.2k` one decimal, `13k` above 10k). */
export function figureOf(text: string, k: string): number | undefined {
  const n = Number(text.replaceAll(',', ''));
  if (!Number.isFinite(n) || n < 0) return undefined;
  const v = k === 'k' ? Math.round(n * 1000) : n;
  return Number.isSafeInteger(v) ? v : undefined;
}

/** The figures of a `Tokens:` line: `<sent> sent[, <w> cache write][, <h> cache hit], <r> received[. Cost: …]`. */
export function readTokens(rest: string): { sent: number; received: number; cacheWrite: number; cacheHit: number } | undefined {
  const figures = rest.replace(/\.\s*Cost:.*$/, '').replace(/\.\s*$/, '').trim();
  const out = { sent: -1, received: -1, cacheWrite: 0, cacheHit: 0 };
  for (const part of figures.split(',').map((p) => p.trim())) {
    const m = FIGURE.exec(part);
    const v = m ? figureOf(m[1] ?? '', m[2] ?? '') : undefined;
    if (!m || v === undefined) return undefined;
    if (m[3] === 'sent') out.sent = v;
    else if (m[3] === 'received') out.received = v;
    else if (m[3] === 'cache write') out.cacheWrite = v;
    else out.cacheHit = v;
  }
  return out.sent < 0 || out.received < 0 ? undefined : out;
}

export class AiderParser implements LineParser {
  readonly skipped: Record<string, number> = {};
  private readonly malformed: MalformedStream;
  private readonly project: string;
  private session = '';
  private ts = '';
  private turns = 0;
  private inInput = false;
  private model: string | undefined;
  private requests = 0;

  constructor(
    private readonly path: string,
    private readonly output: ImportOutput,
  ) {
    this.malformed = new MalformedStream((m) => output.malformed(m));
    this.project = projectOf(path).slice(0, 128);
  }

  private skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  line(line: RawLine): void {
    const text = (line.lineNo === 1 && line.text.charCodeAt(0) === 0xfeff ? line.text.slice(1) : line.text).trimEnd();
    const header = SESSION_HEADER.exec(text);
    if (header) {
      // Aider writes its local time without a zone: read as UTC (the importer cannot know the machine's zone).
      const ms = Date.parse(`${header[1] ?? ''}T${header[2] ?? ''}Z`);
      if (Number.isNaN(ms)) return this.malformed.addLine(line, 'bad_session_time', `The session header's time ${JSON.stringify(`${header[1] ?? ''} ${header[2] ?? ''}`)} is no date.`);
      this.ts = new Date(ms).toISOString();
      this.session = `${this.project}@${header[1] ?? ''}T${header[2] ?? ''}`.slice(0, MAX_ID_CHARS);
      this.turns = 0;
      this.inInput = false;
      this.model = undefined;
      return this.skip('session_header');
    }
    if (text.startsWith('####')) {
      // One input block is one turn (a multi-line input is several `####` lines in a row).
      if (!this.inInput) this.turns++;
      this.inInput = true;
      const model = /^####\s*\/model\s+(\S+)/.exec(text);
      if (model?.[1] && model[1].length <= MAX_ID_CHARS) this.model = model[1];
      return this.skip('user_input');
    }
    if (text.trim() !== '') this.inInput = false;
    if (!text.startsWith('> ')) return this.skip('assistant_text');
    const main = MAIN_MODEL.exec(text);
    if (main?.[1] && main[1].length <= MAX_ID_CHARS) {
      this.model = main[1];
      return this.skip('model');
    }
    if (this.session === '') return this.skip('before_session');
    const tokens = TOKENS.exec(text);
    if (tokens) return this.readTokens(line, tokens[1] ?? '');
    const edit = /^> Applied edit to (.+)$/.exec(text);
    if (edit?.[1]) return this.action(line, 'edit', { path: edit[1].trim() });
    const run = /^> Running (.+)$/.exec(text);
    if (run?.[1]) return this.action(line, 'shell', { command: run[1].trim() });
    const commit = /^> Commit ([0-9a-f]{7,40}) (.*)$/.exec(text);
    if (commit?.[1]) return this.action(line, 'commit', { sha: commit[1], message: (commit[2] ?? '').trim() });
    this.skip('notice');
  }

  private turnId(): string | undefined {
    return this.turns === 0 ? undefined : `${this.session}#${this.turns}`;
  }

  private readTokens(line: RawLine, rest: string): void {
    const t = readTokens(rest);
    if (t === undefined) return this.malformed.addLine(line, 'malformed:tokens', `The Tokens line ${JSON.stringify(rest.slice(0, 100))} is not \`<n> sent, <n> received\` as aider prints it.`);
    this.requests++;
    const turn = this.turnId();
    // The line's number names the request: the file is only appended.
    const key = `L${line.lineNo}`;
    this.output.event({
      envelope: usageEnvelope({
        event_id: stableEventId('aider', this.session, 'usage', key),
        ts: this.ts,
        harness: 'aider',
        session_id: this.session,
        ...(turn === undefined ? {} : { turn_id: turn }),
        ...(this.model === undefined ? {} : { model: this.model }),
        request_id: key,
        // USAGE_CONVENTIONS.aider: `sent` is the whole prompt, the cache figures inside it; all rounded.
        input_tokens: Math.max(0, t.sent - t.cacheWrite - t.cacheHit),
        output_tokens: t.received,
        cache_read_tokens: t.cacheHit,
        cache_write_tokens: t.cacheWrite,
      }),
      source: `${this.path}:${line.lineNo}`,
      endOffset: line.endOffset,
    });
  }

  private action(line: RawLine, tool: 'edit' | 'shell' | 'commit', input: Record<string, string>): void {
    const turn = this.turnId();
    const fields: ToolCallFields = {
      event_id: stableEventId('aider', this.session, 'tool', String(line.lineNo)),
      ts: this.ts,
      harness: 'aider',
      session_id: this.session,
      ...(turn === undefined ? {} : { turn_id: turn }),
      call_id: `L${line.lineNo}`,
      ...(this.model === undefined ? {} : { model: this.model }),
      tool,
      status: 'ok',
    };
    const { envelope: text } = toolCallEnvelopeWithin(fields, { json: JSON.stringify(input) });
    this.output.event({ envelope: text, source: `${this.path}:${line.lineNo}`, endOffset: line.endOffset });
  }

  end(): void {
    // Nothing is held: every event is complete at its own line.
  }
}

export function aiderReading(path: string): LineReading {
  return { parser: (output) => new AiderParser(path, output) };
}

export function parseAiderFile(path: string, data: Buffer): ParsedFile {
  return parseLinesWith(aiderReading(path), data);
}
