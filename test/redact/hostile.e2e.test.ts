// Issue 30's hostile inputs end to end, into the real engine: replay (tool calls, an MCP event, a
// broken line) and import (a Claude Code log with escaped secrets and a malformed record) keep no
// piece of any secret in any table, in clear or JSON-escaped, and keep the look-alikes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadImporter } from '../../src/importers/registry.ts';
import { runImport } from '../../src/pipeline/import.ts';
import { replayPaths, type PipelineCounts } from '../../src/pipeline/batch-writer.ts';
import { INSERT_COLUMNS, type ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { makeTempDir, openTempSink } from '../helpers/db.ts';

// Fake tokens (random characters in the providers' shapes).
const GHP = 'ghp_Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz0Xc2Vb5';
const STRIPE = 'sk_live_51Nv8Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz0Xc';
const BASIC = 'YWRtaW46Y29ycmVjdC1ob3JzZS0xOTg0';
/** What must not be in any table: the secrets less their first character (so an escaped first character does not hide them). */
const PIECES = [GHP.slice(1), STRIPE.slice(1), BASIC, 'Pw-9x7q2', 'Semi-rest-77', 'horse battery', 'Pgp4ss-w0rd'];
const TABLES = Object.keys(INSERT_COLUMNS);

async function everything(sink: ClickHouseSink): Promise<string> {
  const parts: string[] = [];
  for (const t of TABLES) parts.push(JSON.stringify(await sink.queryRows(`SELECT * FROM ${t}`)));
  return parts.join('\n');
}

function leaked(all: string): string[] {
  const decoded = all.replace(/\\u([0-9a-fA-F]{4})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))).replace(/\\\//g, '/');
  return PIECES.filter((p) => all.includes(p) || decoded.includes(p));
}

const call = (id: string, input: string, extra = ''): string =>
  `{"schema":"toolcanon.event/v1","type":"tool_call","ts":"2026-12-06T10:00:00.000Z","harness":"claude_code","session_id":"hostile","call_id":"${id}","tool":"Bash","input":${input},"status":"ok","output":"ok"${extra}}`;

const REPLAY_LINES = [
  call('h1', `{"command":"echo \\u0067${GHP.slice(1)}"}`),
  call('h2', '{"command":"psql postgres:\\/\\/admin:Pw-9x7q2@db\\/app"}'),
  call('h3', `{"url":"https://api.example.com","headers":{"Authorization":"Basic ${BASIC}"}}`),
  call('h4', '{"command":"DB_PASSWORD=ab;Semi-rest-77 PASSWORD=\'correct horse battery staple\' ./run"}'),
  call('h5', `{"argv":["curl","-u","${STRIPE}:","https://api.stripe.com/v1/charges"]}`),
  call('h6', '{"command":"ls"}', `,"event_id":"${GHP}"`),
  call('k1', '{"command":"SORT_KEY=created_at S3_KEY=uploads/2026/a.png python app.py","headers":{"credentials":"same-origin","token":"IDENTIFIER"}}'),
  `{"schema":"toolcanon.event/v1","type":"mcp_status","ts":"2026-12-06T10:00:01.000Z","harness":"mcp","session_id":"hostile","server":"github","client_id":"c1","transport":"http","state":"failed","error":"401 for \\u0067${GHP.slice(1)}"}`,
  `{"schema":"toolcanon.event/v1","type":"tool_call","input":{"command":"PGPASSWORD=Pgp4ss-w0rd psql && echo \\u0073${STRIPE.slice(1)}"`,
];

describe('replay of hostile lines', () => {
  const tmp = makeTempDir('hostile-replay');
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let counts: PipelineCounts;
  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('hostile-replay-db'));
    const file = join(tmp.dir, 'hostile.jsonl');
    writeFileSync(file, `${REPLAY_LINES.join('\n')}\n`);
    counts = await replayPaths([file], sink);
  }, 120_000);
  afterAll(async () => {
    await cleanup();
    tmp.cleanup();
  });

  it('stores every line (7 rows, 1 MCP event, 1 dead letter) and no piece of any secret', async () => {
    expect(counts.rowsWritten + counts.deadLetters).toBe(REPLAY_LINES.length);
    expect(counts.deadLetters).toBe(1);
    const all = await everything(sink);
    expect(all).toContain('[REDACTED:');
    expect(leaked(all)).toEqual([]);
  });

  it('keeps the look-alikes and the bytes around each secret', async () => {
    const rows = await sink.queryRows<{ call_id: string; raw_input: string; command: string | null; redactions: number }>('SELECT call_id, raw_input, command, redactions FROM tool_calls FINAL ORDER BY call_id');
    const k1 = rows.find((r) => r.call_id === 'k1');
    expect(k1?.redactions).toBe(0);
    expect(k1?.raw_input).toBe('{"command":"SORT_KEY=created_at S3_KEY=uploads/2026/a.png python app.py","headers":{"credentials":"same-origin","token":"IDENTIFIER"}}');
    const h1 = rows.find((r) => r.call_id === 'h1');
    expect(h1?.raw_input).toMatch(/^\{"command":"echo \[REDACTED:github_token:[0-9a-f]{4}\]"\}$/);
    expect(h1?.command).toMatch(/^echo \[REDACTED:github_token:[0-9a-f]{4}\]$/);
    const h2 = rows.find((r) => r.call_id === 'h2');
    expect(h2?.raw_input).toMatch(/^\{"command":"psql postgres:\\\/\\\/admin:\[REDACTED:url_password:[0-9a-f]{4}\]@db\\\/app"\}$/);
  });
});

describe('import of a Claude Code log with escaped secrets and a malformed record', () => {
  const tmp = makeTempDir('hostile-import');
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('hostile-import-db'));
    const dir = join(tmp.dir, 'projects', '-home-ada-app');
    mkdirSync(dir, { recursive: true });
    const base = '"isSidechain":false,"userType":"external","cwd":"/home/ada/app","sessionId":"hostile-import","version":"2.1.42"';
    const use = (uuid: string, id: string, input: string): string =>
      `{${base},"parentUuid":null,"type":"assistant","uuid":"${uuid}","timestamp":"2026-12-06T10:00:00.000Z","requestId":"req_${uuid}","message":{"model":"claude-sonnet-4-5","id":"msg_${uuid}","type":"message","role":"assistant","content":[{"type":"tool_use","id":"${id}","name":"Bash","input":${input}}],"usage":{"input_tokens":10,"output_tokens":5}}}`;
    const lines = [
      use('a1', 'toolu_h_1', `{"command":"git push https:\\/\\/x-access-token:\\u0067${GHP.slice(1)}@github.com\\/acme\\/app.git"}`),
      use('a2', 'toolu_h_2', `{"command":"curl -H \\"Authorization: Basic ${BASIC}\\" https://api.example.com && mysql -uroot -pPw-9x7q2 app"}`),
      use('a3', 'toolu_h_3', `{"file_path":"src/pay.ts","old_string":"","new_string":"const key = \\"\\u0073${STRIPE.slice(1)}\\";"}`),
      `{"type":"assistant","message":{"content":[{"type":"tool_use","input":{"command":"PGPASSWORD=Pgp4ss-w0rd psql; echo \\u0067${GHP.slice(1)}`,
    ];
    writeFileSync(join(dir, 'session.jsonl'), `${lines.join('\n')}\n`);
    await runImport(await loadImporter('claude-code'), [join(tmp.dir, 'projects')], sink);
  }, 120_000);
  afterAll(async () => {
    await cleanup();
    tmp.cleanup();
  });

  it('stores the calls and the malformed record with no piece of any secret', async () => {
    const rows = await sink.queryRows<{ call_id: string; redactions: number }>('SELECT call_id, redactions FROM tool_calls FINAL ORDER BY call_id');
    expect(rows.map((r) => r.call_id)).toEqual(['toolu_h_1', 'toolu_h_2', 'toolu_h_3']);
    for (const r of rows) expect(r.redactions, r.call_id).toBeGreaterThan(0);
    const dead = await sink.queryRows<{ reason: string; redactions: number }>('SELECT reason, redactions FROM dead_letters FINAL');
    expect(dead).toHaveLength(1);
    expect(dead[0]?.redactions).toBeGreaterThanOrEqual(2);
    expect(leaked(await everything(sink))).toEqual([]);
  });
});
