// Issue 30's five classes of hostile inputs, through the real decoder: (1) JSON escapes that hid
// secrets from rules run on JSON text, (2) credentials as JSON fields, (3) providers' shapes and
// command-line password forms, (4) whole values, glued tokens and a user's event id, (5) values
// under secret-sounding names that are not secrets. Each expectation is checked with this file's
// own string tests (no code of src/redact/).
import { describe, expect, it } from 'vitest';
import { decodeEvent, DEFAULT_LIMITS } from '../../src/decode/event.ts';
import type { McpEventRow } from '../../src/model/mcp.ts';
import type { ToolCallRow } from '../../src/model/records.ts';

const MARKER = /\[REDACTED:[a-z0-9_]+:[0-9a-f]{4}\]/g;
// Fake tokens in their providers' shapes (random characters, never real credentials).
const GHP = 'ghp_Zq7Lm2Xv9Rt4Kp8Wn3Bc6Hd1Fg5Js0Ya2Ue7';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY01';

function call(input: string, extra = ''): ToolCallRow {
  const line = `{"schema":"toolcanon.event/v1","type":"tool_call","ts":"2026-12-06T10:00:00.000Z","harness":"claude_code","session_id":"s","call_id":"c1","tool":"Bash","input":${input},"status":"ok"${extra}}`;
  const o = decodeEvent(Buffer.from(line), 'hostile.jsonl:1', '2026-12-06 10:00:00.000', DEFAULT_LIMITS);
  if (o.kind !== 'row') throw new Error(`not a row: ${JSON.stringify(o)}`);
  return o.row;
}

/** Every string column of a row, and raw_input's strings decoded. */
function stored(row: object): string {
  const texts = Object.values(row).filter((v): v is string => typeof v === 'string');
  const raw = (row as { raw_input?: string }).raw_input;
  if (raw !== undefined) {
    try {
      texts.push(JSON.stringify(JSON.parse(raw), (_k, v: unknown) => v).replace(/\\\//g, '/'));
      const walk = (v: unknown): void => {
        if (typeof v === 'string') texts.push(v);
        else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
      };
      walk(JSON.parse(raw));
    } catch {
      // a string input: its text is already there
    }
  }
  return texts.join('\n');
}

/** raw_input is the input with each secret's encoded characters replaced by a marker, every other byte equal. */
function expectSpliced(row: ToolCallRow, input: string, encodedSecrets: readonly string[]): void {
  let want = input;
  for (const s of encodedSecrets) {
    expect(want, s).toContain(s);
    want = want.replace(s, '\u0000');
  }
  expect(row.raw_input.replace(MARKER, '\u0000')).toBe(want);
  expect(() => JSON.parse(row.raw_input) as unknown).not.toThrow();
}

describe('1. JSON escapes: the rules run on decoded values, the marker replaces the escaped characters', () => {
  it('\\u0067hp_… in a command: the command column and raw_input hold no token', () => {
    const hidden = `\\u0067${GHP.slice(1)}`;
    const input = `{"command":"echo ${hidden}","description":"x"}`;
    const row = call(input);
    expect(stored(row)).not.toContain(GHP.slice(4));
    expect(row.command).toMatch(/^echo \[REDACTED:[a-z_]+:[0-9a-f]{4}\]$/);
    expect(row.redactions).toBe(1);
    expectSpliced(row, input, [hidden]);
  });

  it('postgres:\\/\\/admin:pw@db (PHP escapes /) and Go\'s p\\u0026ss in a URL password', () => {
    const input = '{"command":"psql postgres:\\/\\/admin:pw@db\\/app && curl https:\\/\\/bob:p\\u0026ssw0rd@api.example.com\\/x"}';
    const row = call(input);
    const all = stored(row);
    expect(all).not.toMatch(/admin:pw@/);
    expect(all).not.toContain('p&ssw0rd');
    expect(all).not.toContain('ssw0rd');
    expect(row.redactions).toBe(2);
    expectSpliced(row, input, ['pw', 'p\\u0026ssw0rd']);
  });

  it('AWS_SECRET_ACCESS_KEY=wJal…\\/K7… is redacted whole, not up to the first escape', () => {
    const enc = AWS_SECRET.replace(/\//g, '\\/');
    const input = `{"command":"AWS_SECRET_ACCESS_KEY=${enc} aws s3 ls"}`;
    const row = call(input);
    for (const piece of AWS_SECRET.split('/')) expect(stored(row)).not.toContain(piece);
    expectSpliced(row, input, [enc]);
  });

  it('a string input (freeform tools) holding escaped JSON is read too', () => {
    const row = call(JSON.stringify(`{"command":"echo \\u0067${GHP.slice(1)}"}`));
    expect(stored(row)).not.toContain(GHP.slice(4));
  });

  it('dead letters: a broken line with an escaped token keeps no token in its raw bytes', () => {
    const line = `{"schema":"toolcanon.event/v1","type":"tool_call","input":{"command":"echo \\u0067${GHP.slice(1)} && PGPASSWORD=s3cr3t-Pa55 psql"}`;
    const o = decodeEvent(Buffer.from(line), 'bad.jsonl:1', '2026-12-06 10:00:00.000', DEFAULT_LIMITS);
    expect(o.kind).toBe('dead');
    if (o.kind !== 'dead') return;
    const raw = Buffer.from(o.dead.raw).toString('utf8');
    expect(raw).not.toContain(GHP.slice(4));
    expect(raw).not.toContain('s3cr3t-Pa55');
    expect(o.dead.redactions).toBe(2);
  });

  it('MCP events: an escaped token in an error is redacted in raw and in the error column', () => {
    const line = `{"schema":"toolcanon.event/v1","type":"mcp_status","ts":"2026-12-06T10:00:00.000Z","harness":"mcp","session_id":"s","server":"github","client_id":"c1","transport":"http","state":"failed","error":"401 with token \\u0067${GHP.slice(1)}","event_id":"${GHP}"}`;
    const o = decodeEvent(Buffer.from(line), 'mcp.jsonl:1', '2026-12-06 10:00:00.000', DEFAULT_LIMITS);
    expect(o.kind).toBe('mcp');
    if (o.kind !== 'mcp') return;
    const row: McpEventRow = o.event;
    expect(JSON.stringify(row)).not.toContain(GHP.slice(4));
    expect(row.error).toMatch(MARKER);
  });
});

describe('2. credentials as JSON fields', () => {
  it.each([
    ['"headers":{"Authorization":"Basic dXNlcjpodW50ZXIyaHVudGVyMg=="}', 'dXNlcjpodW50ZXIyaHVudGVyMg=='],
    ['"Authorization":"token 0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"', '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c'],
    ['"headers":{"authorization":"Bearer abcdefghijklmnopqrstuvwxyzABCDEF"}', 'abcdefghijklmnopqrstuvwxyzABCDEF'],
    ['"X-Api-Key": "d41d8cd98f00b204e9800998ecf8427e"', 'd41d8cd98f00b204e9800998ecf8427e'],
    ['"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"Zq7Lm2Xv9Rt4Kp8Wn3Bc6Hd1Fg5Js0Ya"}', 'Zq7Lm2Xv9Rt4Kp8Wn3Bc6Hd1Fg5Js0Ya'],
  ])('%s', (field, secret) => {
    const input = `{"url":"https://api.example.com/v1/me",${field}}`;
    const row = call(input);
    expect(stored(row)).not.toContain(secret);
    expect(row.redactions).toBe(1);
    expectSpliced(row, input, [secret]);
    // The scheme stays: what kind of credential it was is still known.
    if (field.includes('Basic')) expect(row.raw_input).toContain('"Basic [REDACTED:');
  });
});

describe('3. providers\' shapes and command-line password forms', () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ['curl https://api.stripe.com/v1/charges -u sk_live_51HqLyjWDarjtT1zdp7dcFAKE0123456789abcdefgh:', 'sk_live_51HqLyjWDarjtT1zdp7dcFAKE0123456789abcdefgh'],
    ['curl https://api.stripe.com/v1/charges -u rk_live_51HqLyjWDarjtT1zdp7dcFAKE0123456789abcdefgh:', 'rk_live_51HqLyjWDarjtT1zdp7dcFAKE0123456789abcdefgh'],
    ['npm config set //registry.npmjs.org/:_authToken=npm_Zq7Lm2Xv9Rt4Kp8Wn3Bc6Hd1Fg5Js0Ya2Ue7', 'npm_Zq7Lm2Xv9Rt4Kp8Wn3Bc6Hd1Fg5Js0Ya2Ue7'],
    ['echo SG.Zq7Lm2Xv9Rt4Kp8Wn3Bc6H.d1Fg5Js0Ya2Ue7Zq7Lm2Xv9Rt4Kp8Wn3Bc6Hd1Fg5Js0 | sendmail', 'd1Fg5Js0Ya2Ue7Zq7Lm2Xv9Rt4Kp8Wn3Bc6Hd1Fg5Js0'],
    ['huggingface-cli login --token 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', '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'],
    ['twine upload -p pypi-AgEIcHlwaS5vcmcCJDZqN0xtMlh2OVJ0NEtwOFduM0JjNkhkMUZnNUpzMFlhMlVlNw dist/*', 'pypi-AgEIcHlwaS5vcmcCJDZqN0xtMlh2OVJ0NEtwOFduM0JjNkhkMUZnNUpzMFlhMlVlNw'],
    ['curl -H "x-api-key: Zq7Lm2Xv9Rt4Kp8Wn3Bc6Hd1Fg5Js0Ya" https://api.example.com', 'Zq7Lm2Xv9Rt4Kp8Wn3Bc6Hd1Fg5Js0Ya'],
    ['curl -u deploy:Tr0ub4dor-and-3 https://nexus.example.com', 'Tr0ub4dor-and-3'],
    ['mysql -h db -u root -pHunter2Hunter2 app', 'Hunter2Hunter2'],
    ['MYSQL_PWD=Hunter2Hunter2 mysql -u root', 'Hunter2Hunter2'],
    ['docker login -u bot -p Dckr-Pa55-w0rd registry.example.com', 'Dckr-Pa55-w0rd'],
    ['sshpass -p Sshp4ss-w0rd ssh deploy@host', 'Sshp4ss-w0rd'],
    ['redis-cli -u redis://:R3dis-pw-99@cache:6379 PING', 'R3dis-pw-99'],
    ['PGPASS=Pgp4ss-w0rd psql -h db', 'Pgp4ss-w0rd'],
  ];
  it.each(cases)('%s', (command, secret) => {
    const row = call(JSON.stringify({ command }));
    expect(stored(row)).not.toContain(secret);
    expect(row.redactions).toBeGreaterThan(0);
  });

  it('a bare sk_live_ in an Edit\'s new_string', () => {
    const row = call(JSON.stringify({ file_path: 'src/pay.ts', old_string: 'const k = "";', new_string: 'const k = "sk_live_51HqLyjWDarjtT1zdp7dcFAKE0123456789abcdefgh";' }));
    expect(stored(row)).not.toContain('51HqLyjWDarjtT1zdp7dcFAKE');
  });

  it('argv forms: ["curl","-u","user:pass"], ["mysql","-pPASS"], ["sshpass","-p","PASS"]', () => {
    const row = call(JSON.stringify({ argv: ['curl', '-u', 'user:Arg-v-Pa55', 'https://x.example.com'], argv2: ['mysql', '-pMy5ql-Pa55'], argv3: ['sshpass', '-p', 'Ssh-Pa55-99', 'ssh', 'h'] }));
    const all = stored(row);
    for (const s of ['Arg-v-Pa55', 'My5ql-Pa55', 'Ssh-Pa55-99']) expect(all).not.toContain(s);
  });
});

describe('4. whole values', () => {
  it.each([
    ['DB_PASSWORD=ab;Semicolon-rest9 ./run', ['ab;Semicolon-rest9', 'Semicolon-rest9']],
    ["PASSWORD='correct horse battery staple' ./run", ['horse', 'battery', 'staple', 'correct']],
    ['export APP_SECRET="x9 y8 z7 w6 v5 u4"', ['x9 y8', 'w6 v5 u4']],
    ['curl "https://bob:p4ss@w0rd@api.example.com/x"', ['p4ss', 'w0rd']],
  ])('%s', (command, pieces) => {
    const row = call(JSON.stringify({ command }));
    const all = stored(row);
    for (const p of pieces) expect(all).not.toContain(p);
    expect(row.redactions).toBe(1);
  });

  it('tokens glued after - or _ (s-ghp_…, mcp__ghp_…__x)', () => {
    const row = call(JSON.stringify({ command: `echo s-${GHP} mcp__${GHP}__x` }));
    expect(stored(row)).not.toContain(GHP.slice(4));
    expect(row.redactions).toBe(2);
  });

  it('a user-supplied event_id that is a token is stored redacted', () => {
    const row = call('{"command":"ls"}', `,"event_id":"${GHP}"`);
    expect(row.event_id).not.toContain(GHP.slice(4));
    expect(row.event_id).toMatch(MARKER);
  });
});

describe('5. no false positives', () => {
  it.each([
    'api_key=os.environ["API_KEY"]',
    'SORT_KEY=created_at',
    'S3_KEY=uploads/2026/12/avatar.png',
    'const apiKey = process.env.OPENAI_API_KEY',
    'export TOKEN=${GITHUB_TOKEN}',
    'token := os.Getenv("TOKEN")',
  ])('%s', (command) => {
    const input = JSON.stringify({ command });
    const row = call(input);
    expect(row.raw_input).toBe(input);
    expect(row.redactions).toBe(0);
  });

  it.each(['{"url":"/api","credentials":"same-origin"}', '{"token":"IDENTIFIER","kind":"lexer"}', '{"credentials":"include"}', '{"max_tokens":4096,"password_policy":"strong"}'])('%s', (input) => {
    const row = call(input);
    expect(row.raw_input).toBe(input);
    expect(row.redactions).toBe(0);
  });
});
