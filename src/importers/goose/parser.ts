// Turns Goose's sessions database (`sessions.db`, SQLite, changed in place) into toolcanon
// events, read through chdb's sqlite() table function (../sqlite.ts): a usage per `usage_ledger`
// row (one provider call), else — a database from before the ledger — the session's `accumulated_*`
// totals as one usage per session; a tool_call per `toolRequest` block of an assistant message
// joined to the `toolResponse` of the same id in a later user message. A sub_agent session is an
// agent of its parent session. The database changes anywhere, so it is read whole (completeBytes
// 0) and every event has a stable id: a re-read replaces. A row that cannot be read is a
// malformed record whose line is the row's id in its table; never throws.
import { errorSummary, stableEventId, type RawToolInput, type ToolCallFields, toolCallEnvelopeWithin, type UsageFields, usageEnvelope, type Envelope } from '../envelope.ts';
import { isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';
import { describeValue, MalformedRecords } from '../lines.ts';
import { isSqlite, type Row, SqliteCopy } from '../sqlite.ts';
import type { ImportedEvent, ParsedFile } from '../types.ts';

/** The agent id a session's accumulated totals are written under (no single request; as Copilot CLI's). */
export const SESSION_TOTALS_AGENT = 'session_totals';

function count(v: unknown): number | undefined {
  if (v === null || v === undefined) return 0;
  const n = typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

function secondsTime(v: unknown): string | undefined {
  const n = typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 && n < 253402300800 ? new Date(Math.floor(n * 1000)).toISOString() : undefined;
}

/** SQLite `CURRENT_TIMESTAMP` text (`YYYY-MM-DD HH:MM:SS`, UTC) as RFC 3339. */
function sqlTime(v: unknown): string | undefined {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}/.test(v)) return undefined;
  const ms = Date.parse(`${v.replace(' ', 'T').slice(0, 19)}Z`);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' && v.length <= MAX_ID_CHARS ? v : undefined;
}

interface Place {
  readonly sessionId: string;
  readonly agentId?: string;
}

class GooseDb {
  readonly events: ImportedEvent[] = [];
  readonly malformed = new MalformedRecords();
  readonly skipped: Record<string, number> = {};
  recordsRead = 0;
  private readonly places = new Map<string, Place>();

  constructor(
    readonly path: string,
    readonly data: Buffer,
  ) {}

  skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  bad(table: string, row: Row, problem: string, detail: string): void {
    const id = count(row['id']);
    this.malformed.add({ raw: JSON.stringify({ table, ...row }), line: id !== undefined && id > 0 ? id : 1, problem: `${table}:${problem}`, detail, endOffset: this.data.length });
  }

  emit(envelope: Envelope, table: string, id: unknown): void {
    this.events.push({ envelope, source: `${this.path}:${String(count(id) ?? 1)}`, endOffset: this.data.length });
    void table;
  }

  /** The session and agent of a session id: a sub_agent session is an agent of its parent. */
  place(sessionId: string): Place {
    return this.places.get(sessionId) ?? { sessionId };
  }

  readSessions(rows: readonly Row[]): void {
    for (const r of rows) {
      const id = str(r['id']);
      if (id === undefined) continue;
      const parent = str(r['parent_session_id']);
      this.places.set(id, parent !== undefined && parent !== id && r['session_type'] === 'sub_agent' ? { sessionId: parent, agentId: id } : r['session_type'] === 'sub_agent' && parent !== undefined ? { sessionId: parent, agentId: id } : { sessionId: id });
    }
  }

  usage(fields: Omit<UsageFields, 'harness' | 'session_id' | 'agent_id'>, sessionId: string, agentId: string | undefined, table: string, rowId: unknown): void {
    const p = this.place(sessionId);
    const agent = agentId ?? p.agentId;
    this.emit(usageEnvelope({ ...fields, harness: 'goose', session_id: p.sessionId, ...(agent === undefined ? {} : { agent_id: agent }) }), table, rowId);
  }
}

function readLedger(db: GooseDb, rows: readonly Row[]): void {
  for (const r of rows) {
    db.recordsRead++;
    const session = str(r['session_id']);
    if (session === undefined) {
      db.bad('usage_ledger', r, 'malformed', `\`session_id\` is ${describeValue(r['session_id'])}, not a session id.`);
      continue;
    }
    const ts = secondsTime(r['created_timestamp']);
    if (ts === undefined) {
      db.bad('usage_ledger', r, 'no_time', `\`created_timestamp\` is ${describeValue(r['created_timestamp'])}, not a time in seconds.`);
      continue;
    }
    const figures = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens'].map((k) => count(r[k]));
    const badAt = figures.findIndex((n) => n === undefined);
    if (badAt >= 0) {
      const k = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens'][badAt] ?? '';
      db.bad('usage_ledger', r, 'malformed', `\`${k}\` is ${describeValue(r[k])}, not a non-negative integer.`);
      continue;
    }
    const [input = 0, output = 0, cacheRead = 0, cacheWrite = 0] = figures as number[];
    if (input + output + cacheRead + cacheWrite === 0) {
      db.skip('usage_ledger:zero');
      continue;
    }
    const id = String(count(r['id']) ?? '');
    const model = str(r['model']);
    // Ledger ids restart when the database is made again: the time keeps the key unique.
    db.usage({
      event_id: stableEventId('goose', session, 'usage', 'ledger', id, String(r['created_timestamp'])),
      ts,
      ...(model === undefined ? {} : { model }),
      request_id: `ledger:${id}`,
      // USAGE_CONVENTIONS.goose: the importer writes the fresh input (the ledger's input includes the cache read).
      input_tokens: Math.max(0, input - cacheRead),
      output_tokens: output,
      cache_read_tokens: cacheRead,
      cache_write_tokens: cacheWrite,
    }, session, undefined, 'usage_ledger', r['id']);
  }
}

/** A database from before the ledger: each session's accumulated totals as one usage. */
function readAccumulated(db: GooseDb, rows: readonly Row[]): void {
  for (const r of rows) {
    const session = str(r['id']);
    if (session === undefined) continue;
    const figures = ['accumulated_input_tokens', 'accumulated_output_tokens', 'accumulated_cache_read_tokens', 'accumulated_cache_write_tokens'].map((k) => count(r[k]));
    if (figures.some((n) => n === undefined)) {
      db.bad('sessions', r, 'malformed', 'An `accumulated_*` figure is not a non-negative integer.');
      continue;
    }
    const [input = 0, output = 0, cacheRead = 0, cacheWrite = 0] = figures as number[];
    if (input + output === 0) continue;
    const ts = sqlTime(r['created_at']);
    if (ts === undefined) {
      db.bad('sessions', r, 'no_time', `\`created_at\` is ${describeValue(r['created_at'])}, not a time.`);
      continue;
    }
    let model: string | undefined;
    try {
      const cfg: unknown = typeof r['model_config_json'] === 'string' ? JSON.parse(r['model_config_json']) : undefined;
      model = isObject(cfg) ? str(cfg['model_name']) : undefined;
    } catch {
      model = undefined;
    }
    const p = db.place(session);
    db.usage({
      event_id: stableEventId('goose', session, 'usage', 'accumulated'),
      ts,
      ...(model === undefined ? {} : { model }),
      request_id: `${session}:accumulated`.slice(0, MAX_ID_CHARS),
      input_tokens: Math.max(0, input - cacheRead),
      output_tokens: output,
      cache_read_tokens: cacheRead,
      cache_write_tokens: cacheWrite,
    }, session, p.agentId === undefined ? SESSION_TOTALS_AGENT : `${SESSION_TOTALS_AGENT}:${p.agentId}`.slice(0, MAX_ID_CHARS), 'sessions', 1);
  }
}

interface Call {
  readonly id: string;
  readonly session: string;
  readonly name: string;
  readonly input: RawToolInput;
  readonly ts: string;
  readonly rowId: unknown;
  readonly error?: string;
}

function readMessages(db: GooseDb, rows: readonly Row[]): void {
  const calls = new Map<string, Call>();
  const results = new Map<string, { status: 'ok' | 'error'; output?: string; error?: string; ts: string }>();
  const sorted = [...rows].sort((a, b) => (count(a['id']) ?? 0) - (count(b['id']) ?? 0));
  for (const r of sorted) {
    db.recordsRead++;
    const session = str(r['session_id']);
    const ts = secondsTime(r['created_timestamp']);
    let blocks: unknown;
    try {
      blocks = typeof r['content_json'] === 'string' ? JSON.parse(r['content_json']) : undefined;
    } catch {
      blocks = undefined;
    }
    if (session === undefined || ts === undefined || !Array.isArray(blocks)) {
      db.bad('messages', r, 'malformed', session === undefined ? `\`session_id\` is ${describeValue(r['session_id'])}, not a session id.` : ts === undefined ? `\`created_timestamp\` is ${describeValue(r['created_timestamp'])}, not a time in seconds.` : '`content_json` is not a JSON array of content blocks.');
      continue;
    }
    let used = 0;
    for (const b of blocks) {
      if (!isObject(b)) continue;
      if (b['type'] === 'toolRequest') {
        used++;
        const id = str(b['id']);
        const call = isObject(b['toolCall']) ? b['toolCall'] : undefined;
        const value = call !== undefined && isObject(call['value']) ? call['value'] : undefined;
        const name = value !== undefined ? str(value['name']) : undefined;
        if (id === undefined || call === undefined) {
          db.bad('messages', r, 'malformed:tool_request', '`toolRequest` has no `id` or `toolCall`.');
          continue;
        }
        const key = `${session}\u0000${id}`;
        if (calls.has(key)) continue;
        // A call the model wrote badly (status error) never ran: an error, under its name when it has one.
        const failed = call['status'] !== 'success';
        const err = failed ? (typeof call['error'] === 'string' ? call['error'] : 'invalid tool call') : undefined;
        const args = value?.['arguments'];
        calls.set(key, { id, session, name: name ?? 'unknown', input: isObject(args) ? { json: JSON.stringify(args) } : { json: '{}' }, ts, rowId: r['id'], ...(err === undefined ? {} : { error: `invalid_call: ${errorSummary(err) || 'invalid tool call'}` }) });
      } else if (b['type'] === 'toolResponse') {
        used++;
        const id = str(b['id']);
        if (id === undefined) continue;
        const result = isObject(b['toolResult']) ? b['toolResult'] : {};
        const value = isObject(result['value']) ? result['value'] : undefined;
        const content = value !== undefined && Array.isArray(value['content']) ? value['content'] : [];
        const text = content.filter((p): p is JsonObject => isObject(p) && typeof p['text'] === 'string').map((p) => p['text'] as string).join('\n');
        const failed = result['status'] !== 'success' || value?.['isError'] === true;
        const said = typeof result['error'] === 'string' ? result['error'] : text;
        results.set(`${session}\u0000${id}`, failed ? { status: 'error', ...(text === '' ? {} : { output: text }), error: errorSummary(said) || 'error', ts } : { status: 'ok', ...(text === '' ? {} : { output: text }), ts });
      }
    }
    if (used === 0) db.skip(`messages:${String(r['role']).slice(0, 32)}`);
  }
  for (const [key, call] of calls) {
    const res = call.error !== undefined ? { status: 'error' as const, error: call.error, ts: call.ts } : results.get(key);
    const p = db.place(call.session);
    const d = res === undefined ? NaN : (Date.parse(res.ts) - Date.parse(call.ts));
    const fields: ToolCallFields = {
      event_id: stableEventId('goose', call.session, 'tool', call.id),
      ts: call.ts,
      harness: 'goose',
      session_id: p.sessionId,
      ...(p.agentId === undefined ? {} : { agent_id: p.agentId }),
      call_id: call.id,
      tool: call.name,
      status: res?.status ?? 'pending',
      ...(res !== undefined && 'output' in res && res.output !== undefined ? { output: res.output } : {}),
      ...(res?.error === undefined ? {} : { error: res.error }),
      ...(Number.isSafeInteger(d) && d >= 0 ? { duration_ms: d } : {}),
    };
    const { envelope, truncated } = toolCallEnvelopeWithin(fields, call.input);
    if (truncated) db.skip('output_truncated');
    db.emit(envelope, 'messages', call.rowId);
  }
}

/** Parses a Goose sessions database (its bytes; the live `-wal` beside `path` is read with them). */
export function parseGooseDb(path: string, data: Buffer): ParsedFile {
  const db = new GooseDb(path, data);
  const whole = (problem: string, detail: string): ParsedFile => ({ events: [], malformed: [{ raw: data, line: 1, problem, detail, endOffset: data.length }], completeBytes: 0, recordsRead: 1, skipped: {} });
  if (data.length === 0) return { events: [], malformed: [], completeBytes: 0, recordsRead: 0, skipped: { empty_database: 1 } };
  if (!isSqlite(data)) return whole('not_sqlite', 'The file does not start with the SQLite 3 header: it is no sessions database.');
  const copy = new SqliteCopy(data, path);
  try {
    const tables = copy.tables();
    if (!tables.has('sessions') || !tables.has('messages')) return whole('not_goose', 'The database has no `sessions` and `messages` tables: it is not Goose\'s.');
    const sessions = copy.rows('sessions');
    db.readSessions(sessions);
    if (tables.has('usage_ledger')) readLedger(db, copy.rows('usage_ledger'));
    else readAccumulated(db, sessions);
    readMessages(db, copy.rows('messages'));
  } catch (error) {
    return whole('unreadable_database', `The engine could not read the database: ${errorSummary(String(error)).slice(0, 300).replace(/\.?$/, '.')}`);
  } finally {
    copy.close();
  }
  return { events: db.events, malformed: db.malformed.records, completeBytes: 0, recordsRead: db.recordsRead, skipped: db.skipped };
}
