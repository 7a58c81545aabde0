// Turns Hermes Agent's state database (`state.db`, SQLite, changed in place) into toolcanon
// events, read through chdb's sqlite() table function (../sqlite.ts): Hermes keeps **per-session
// token totals only** (`sessions.*_tokens`, updated after each API call), so each session with
// tokens gives one usage event (agent_id `session_totals`, as Copilot CLI's and Droid's totals),
// its id stable and its time the session's start, replaced when a re-read finds the totals grown;
// a tool_call per entry of an assistant row's `tool_calls` joined to the `tool` row of the same
// `tool_call_id`. A delegated session (`parent_session_id`, its parent not ended by compression)
// is an agent of its parent. Read whole (completeBytes 0); a row that cannot be read is a malformed
// record whose line is its row id (sessions: 1-based row number); never throws.
import { errorSummary, stableEventId, type RawToolInput, type ToolCallFields, toolCallEnvelopeWithin, usageEnvelope, type Envelope } from '../envelope.ts';
import { isObject, MAX_ID_CHARS } from '../json.ts';
import { describeValue, MalformedRecords } from '../lines.ts';
import { isSqlite, type Row, SqliteCopy } from '../sqlite.ts';
import type { ImportedEvent, ParsedFile } from '../types.ts';

export const SESSION_TOTALS_AGENT = 'session_totals';

const FIGURES = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens'] as const;

function count(v: unknown): number | undefined {
  if (v === null || v === undefined) return 0;
  const n = typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

function secondsTime(v: unknown): string | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 && v < 253402300800 ? new Date(Math.floor(v * 1000)).toISOString() : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' && v.length <= MAX_ID_CHARS ? v : undefined;
}

/** A session's place: a delegated child is an agent of its parent; a continuation (after compression) its own session. */
interface Place {
  readonly sessionId: string;
  readonly agentId?: string;
}

class HermesDb {
  readonly events: ImportedEvent[] = [];
  readonly malformed = new MalformedRecords();
  readonly skipped: Record<string, number> = {};
  readonly places = new Map<string, Place>();
  recordsRead = 0;

  constructor(
    readonly path: string,
    readonly data: Buffer,
  ) {}

  skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  bad(table: string, line: number, row: Row, problem: string, detail: string): void {
    this.malformed.add({ raw: JSON.stringify({ table, ...row }), line: Math.max(1, line), problem: `${table}:${problem}`, detail, endOffset: this.data.length });
  }

  emit(envelope: Envelope, at: number): void {
    this.events.push({ envelope, source: `${this.path}:${Math.max(1, at)}`, endOffset: this.data.length });
  }

  place(id: string): Place {
    return this.places.get(id) ?? { sessionId: id };
  }
}

function readSessions(db: HermesDb, rows: readonly Row[]): void {
  const byId = new Map(rows.map((r) => [str(r['id']), r] as const));
  for (const r of rows) {
    const id = str(r['id']);
    const parent = str(r['parent_session_id']);
    if (id === undefined || parent === undefined || parent === id) continue;
    const p = byId.get(parent);
    // Compression and handoff start a continuation session when the parent ends: the same
    // conversation, not a subagent (a delegated child starts while its parent runs).
    const ended = p === undefined ? undefined : p['ended_at'];
    const continuation = p !== undefined && typeof p['end_reason'] === 'string' && /compress|handoff/.test(p['end_reason']) && typeof ended === 'number' && typeof r['started_at'] === 'number' && r['started_at'] >= ended;
    if (!continuation) db.places.set(id, { sessionId: parent, agentId: id });
  }
  rows.forEach((r, i) => {
    db.recordsRead++;
    const id = str(r['id']);
    if (id === undefined) return db.bad('sessions', i + 1, r, 'malformed', `\`id\` is ${describeValue(r['id'])}, not a session id.`);
    const figures = FIGURES.map((k) => count(r[k]));
    const badAt = figures.findIndex((n) => n === undefined);
    if (badAt >= 0) return db.bad('sessions', i + 1, r, 'malformed', `\`${FIGURES[badAt] ?? ''}\` is ${describeValue(r[FIGURES[badAt] ?? ''])}, not a non-negative integer.`);
    const [input = 0, output = 0, cacheRead = 0, cacheWrite = 0, reasoning = 0] = figures as number[];
    if (input + output + cacheRead + cacheWrite + reasoning === 0) return db.skip('sessions:no_tokens');
    const ts = secondsTime(r['started_at']);
    if (ts === undefined) return db.bad('sessions', i + 1, r, 'no_time', `\`started_at\` is ${describeValue(r['started_at'])}, not a time in seconds.`);
    const p = db.place(id);
    const model = str(r['model']);
    db.emit(usageEnvelope({
      event_id: stableEventId('hermes_agent', id, 'usage', 'totals'),
      ts,
      harness: 'hermes_agent',
      session_id: p.sessionId,
      agent_id: p.agentId === undefined ? SESSION_TOTALS_AGENT : `${SESSION_TOTALS_AGENT}:${p.agentId}`.slice(0, MAX_ID_CHARS),
      ...(model === undefined ? {} : { model }),
      request_id: `${id}:totals`.slice(0, MAX_ID_CHARS),
      // USAGE_CONVENTIONS.hermes_agent: input excludes the cache (Hermes normalises per provider); reasoning inside output.
      input_tokens: input,
      output_tokens: output,
      cache_read_tokens: cacheRead,
      cache_write_tokens: cacheWrite,
      reasoning_tokens: reasoning,
    }), i + 1);
  });
}

/**
 * Hermes registers an MCP server's tool as `mcp_<server>_<tool>` (tools/mcp_tool.py; single
 * underscores, so the name alone cannot be split): with the server names of the config
 * (`mcp_servers` in config.yaml beside state.db) it becomes `server__tool`, the longest server
 * name that fits first; without them the name is kept as logged.
 */
export function mcpName(name: string, servers: readonly string[]): string {
  if (!name.startsWith('mcp_')) return name;
  const rest = name.slice(4);
  const server = [...servers].sort((a, b) => b.length - a.length).find((s) => rest.startsWith(`${s.replace(/[^A-Za-z0-9_]/g, '_')}_`) && rest.length > s.length + 1);
  return server === undefined ? name : `${server}__${rest.slice(server.length + 1)}`;
}

/** The MCP server names of a Hermes config.yaml text: the keys under a top-level `mcp_servers:`. */
export function mcpServersOf(yaml: string | undefined): string[] {
  if (yaml === undefined) return [];
  const out: string[] = [];
  let inside = false;
  let indent = -1;
  for (const line of yaml.split(/\r?\n/)) {
    if (/^\S/.test(line)) {
      inside = /^mcp_servers:\s*(#.*)?$/.test(line);
      indent = -1;
      continue;
    }
    if (!inside || line.trim() === '' || line.trim().startsWith('#')) continue;
    const m = /^(\s+)([A-Za-z0-9_.-]+)\s*:/.exec(line);
    if (!m?.[1] || !m[2]) continue;
    if (indent < 0) indent = m[1].length;
    if (m[1].length === indent) out.push(m[2]);
  }
  return out;
}

interface Call {
  readonly id: string;
  readonly session: string;
  readonly name: string;
  readonly input: RawToolInput;
  readonly ts: string;
  readonly rowId: number;
}

function readMessages(db: HermesDb, rows: readonly Row[], servers: readonly string[]): void {
  const calls = new Map<string, Call>();
  const results = new Map<string, { status: 'ok' | 'error'; output?: string; error?: string; ts: string }>();
  const sorted = [...rows].sort((a, b) => (count(a['id']) ?? 0) - (count(b['id']) ?? 0));
  for (const r of sorted) {
    db.recordsRead++;
    const rowId = count(r['id']) ?? 1;
    const session = str(r['session_id']);
    const ts = secondsTime(r['timestamp']);
    if (session === undefined || ts === undefined) {
      db.bad('messages', rowId, r, 'malformed', session === undefined ? `\`session_id\` is ${describeValue(r['session_id'])}, not a session id.` : `\`timestamp\` is ${describeValue(r['timestamp'])}, not a time in seconds.`);
      continue;
    }
    const role = r['role'];
    if (role === 'tool') {
      const id = str(r['tool_call_id']);
      if (id === undefined) {
        db.skip('messages:tool_without_call_id');
        continue;
      }
      const text = typeof r['content'] === 'string' ? r['content'] : '';
      // Hermes' tools answer JSON; a failure names an `error`.
      let error: string | undefined;
      try {
        const v: unknown = JSON.parse(text);
        if (isObject(v) && typeof v['error'] === 'string' && v['error'] !== '') error = v['error'];
        else if (isObject(v) && v['success'] === false) error = typeof v['message'] === 'string' ? v['message'] : 'error';
      } catch {
        error = undefined;
      }
      results.set(`${session}\u0000${id}`, error === undefined ? { status: 'ok', ...(text === '' ? {} : { output: text }), ts } : { status: 'error', output: text, error: errorSummary(error) || 'error', ts });
      continue;
    }
    if (role !== 'assistant' || r['tool_calls'] === null || r['tool_calls'] === undefined || r['tool_calls'] === '') {
      db.skip(`messages:${String(role).slice(0, 32)}`);
      continue;
    }
    let list: unknown;
    try {
      list = typeof r['tool_calls'] === 'string' ? JSON.parse(r['tool_calls']) : undefined;
    } catch {
      list = undefined;
    }
    if (!Array.isArray(list)) {
      db.bad('messages', rowId, r, 'malformed:tool_calls', '`tool_calls` is not a JSON array of calls.');
      continue;
    }
    for (const t of list) {
      const id = isObject(t) ? str(t['id']) ?? str(t['call_id']) : undefined;
      const fn = isObject(t) && isObject(t['function']) ? t['function'] : undefined;
      const name = fn !== undefined ? str(fn['name']) : undefined;
      if (id === undefined || name === undefined) {
        db.bad('messages', rowId, r, 'malformed:tool_call', 'A `tool_calls` entry has no `id` or `function.name`.');
        continue;
      }
      const args = fn?.['arguments'];
      let input: RawToolInput = { json: '{}' };
      if (typeof args === 'string' && args.trim() !== '') {
        try {
          input = isObject(JSON.parse(args)) ? { json: args.trim() } : { string: args };
        } catch {
          input = { string: args };
        }
      } else if (isObject(args)) input = { json: JSON.stringify(args) };
      const key = `${session}\u0000${id}`;
      if (!calls.has(key)) calls.set(key, { id, session, name: mcpName(name, servers), input, ts, rowId });
    }
  }
  for (const [key, call] of calls) {
    const res = results.get(key);
    const p = db.place(call.session);
    const d = res === undefined ? NaN : Date.parse(res.ts) - Date.parse(call.ts);
    const fields: ToolCallFields = {
      event_id: stableEventId('hermes_agent', call.session, 'tool', call.id),
      ts: call.ts,
      harness: 'hermes_agent',
      session_id: p.sessionId,
      ...(p.agentId === undefined ? {} : { agent_id: p.agentId }),
      call_id: call.id,
      tool: call.name,
      status: res?.status ?? 'pending',
      ...(res?.output === undefined ? {} : { output: res.output }),
      ...(res?.error === undefined ? {} : { error: res.error }),
      ...(Number.isSafeInteger(d) && d >= 0 ? { duration_ms: d } : {}),
    };
    const { envelope, truncated } = toolCallEnvelopeWithin(fields, call.input);
    if (truncated) db.skip('output_truncated');
    db.emit(envelope, call.rowId);
  }
}

/** Parses a Hermes state database (its bytes; the live `-wal` beside `path` is read with them). */
export function parseHermesDb(path: string, data: Buffer, mcpServers: readonly string[] = []): ParsedFile {
  const db = new HermesDb(path, data);
  const whole = (problem: string, detail: string): ParsedFile => ({ events: [], malformed: [{ raw: data, line: 1, problem, detail, endOffset: data.length }], completeBytes: 0, recordsRead: 1, skipped: {} });
  if (data.length === 0) return { events: [], malformed: [], completeBytes: 0, recordsRead: 0, skipped: { empty_database: 1 } };
  if (!isSqlite(data)) return whole('not_sqlite', 'The file does not start with the SQLite 3 header: it is no state database.');
  const copy = new SqliteCopy(data, path);
  try {
    const tables = copy.tables();
    if (!tables.has('sessions') || !tables.has('messages')) return whole('not_hermes', 'The database has no `sessions` and `messages` tables: it is not Hermes\'.');
    readSessions(db, copy.rows('sessions'));
    readMessages(db, copy.rows('messages'), mcpServers);
  } catch (error) {
    return whole('unreadable_database', `The engine could not read the database: ${errorSummary(String(error)).slice(0, 300).replace(/\.?$/, '.')}`);
  } finally {
    copy.close();
  }
  return { events: db.events, malformed: db.malformed.records, completeBytes: 0, recordsRead: db.recordsRead, skipped: db.skipped };
}
