// Secret redaction (issue 10): every rule on a positive and the look-alikes it must leave alone;
// JSON stays the same JSON but for the markers; bytes that are not UTF-8 stay the same bytes.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { redactBytes, redactCounted, redactionFromEnv, redactionMarker, redactShortCounted, redactText } from '../../src/redact/redact.ts';
import { isSecretName, NAME_WORD, REDACTION_RULES } from '../../src/redact/rules.ts';
import { decodeEvent } from '../../src/decode/event.ts';

const MARKER = /\[REDACTED:([a-z_0-9]+):[0-9a-f]{4}\]/g;
const kinds = (text: string): string[] => [...redactText(text).text.matchAll(MARKER)].map((m) => m[1] as string);
const x = (n: number, s = 'aB3dE5fG7h'): string => s.repeat(Math.ceil(n / s.length)).slice(0, n);

/** One example per rule: the text, the kind it must be redacted as, and the secret that must go. */
const POSITIVES: ReadonlyArray<{ kind: string; text: string; secret: string }> = [
  { kind: 'private_key', text: '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----', secret: 'MIIEowIBAAKCAQEA' },
  { kind: 'anthropic_key', text: `key sk-ant-api03-${x(93)}AA here`, secret: `sk-ant-api03-${x(93)}AA` },
  { kind: 'openai_key', text: `OPENAI sk-proj-${x(60)} end`, secret: `sk-proj-${x(60)}` },
  { kind: 'xai_key', text: `xai-${x(80)}`, secret: `xai-${x(80)}` },
  { kind: 'google_api_key', text: `?key=AIza${x(35)}&q=1`, secret: `AIza${x(35)}` },
  { kind: 'github_token', text: `token ghp_${x(36)}`, secret: `ghp_${x(36)}` },
  { kind: 'github_token', text: `github_pat_${x(82, 'aB3_')}`, secret: `github_pat_${x(82, 'aB3_')}` },
  { kind: 'gitlab_token', text: `glpat-${x(20)}`, secret: `glpat-${x(20)}` },
  { kind: 'aws_access_key', text: 'id AKIAIOSFODNN7EXAMPLE.', secret: 'AKIAIOSFODNN7EXAMPLE' },
  { kind: 'slack_token', text: 'xoxb-123456789012-1234567890123-abcdefghijABCDEFGHIJ1234', secret: 'xoxb-123456789012-1234567890123-abcdefghijABCDEFGHIJ1234' },
  { kind: 'slack_webhook', text: 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX', secret: 'T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX' },
  { kind: 'jwt', text: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', secret: 'dozjgNryP4J3jVmNHl0w5N' },
  { kind: 'auth_header', text: 'Authorization: Bearer abc.def-ghi', secret: 'abc.def-ghi' },
  { kind: 'auth_header', text: 'proxy-authorization: basic dXNlcjpwYXNz', secret: 'dXNlcjpwYXNz' },
  { kind: 'bearer_token', text: '"Bearer 0123456789abcdefghij"', secret: '0123456789abcdefghij' },
  { kind: 'url_password', text: 'redis://default:p4ss-w0rd@cache:6379/0', secret: 'p4ss-w0rd' },
  { kind: 'secret_assignment', text: 'DB_PASSWORD=hunter22 ./run', secret: 'hunter22' },
  { kind: 'secret_assignment', text: "export API_KEY='abc-123-def'", secret: 'abc-123-def' },
  { kind: 'aws_secret_key', text: 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', secret: 'wJalrXUtnFEMI' },
  { kind: 'secret_flag', text: 'cli --api-key abcdef123 --verbose', secret: 'abcdef123' },
  { kind: 'secret_flag', text: 'psql --password=pw-secret-1', secret: 'pw-secret-1' },
  { kind: 'secret_field', text: '{"clientSecret": "s3cr3t value"}', secret: 's3cr3t value' },
];

describe('redaction rules', () => {
  it.each(POSITIVES)('redacts $kind: $text', ({ kind, text, secret }) => {
    const r = redactText(text);
    expect(r.count).toBeGreaterThan(0);
    expect(r.text).not.toContain(secret);
    expect(kinds(text)).toContain(kind);
  });

  // Every rule has positives in test/redact/corpus.ts (corpus.test.ts holds that).

  it.each([
    'python train.py --max-tokens 4096 --tokenizer gpt2',
    'ssh -i ~/.ssh/id --key-file ./k.pem',
    'echo PWD=$PWD OLDPWD=/tmp sort_key=name primary_key=id',
    'export GITHUB_TOKEN=$(gh auth token) TOKEN=${T} PASSWORD=%PASS%',
    'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
    'const csrfToken = document.querySelector("meta").content',
    'token = socket.assigns.token',
    'token = Phoenix.Token.sign(socket, "salt", id)',
    'the bearer of bad news; basic authorization rules',
    'https://example.com/path?x=1 and http://host:8080/a@b',
    '{"input_tokens": 1234, "max_tokens": 4096, "password_policy": "strong"}',
    'skills/sk-learn and git checkout -b ghp-branch and eyJ alone',
  ])('leaves a look-alike alone: %s', (text) => {
    expect(redactText(text)).toEqual({ text, count: 0 });
  });

  it('keeps the text before the secret (the header, NAME=) and after it', () => {
    expect(redactText('A=1 DB_PASSWORD=hunter22 ./run').text).toBe(`A=1 DB_PASSWORD=${redactionMarker('secret_assignment', 'hunter22')} ./run`);
    expect(redactText('-H "Authorization: Bearer abc.def"').text).toBe(`-H "Authorization: Bearer ${redactionMarker('auth_header', 'abc.def')}"`);
  });

  it('finds a token inside an assignment whose name is not a secret (sort_key=ghp_…)', () => {
    expect(kinds(`sort_key=ghp_${x(36)}`)).toEqual(['github_token']);
  });

  it('names secrets by the last part of the name', () => {
    for (const n of ['GITHUB_TOKEN', 'db_password', 'api-key', 'clientSecret', 'OPENAI_API_KEY', 'STRIPE_KEY', 'passphrase', 'aws_secret_access_key']) expect(isSecretName(n), n).toBe(true);
    for (const n of ['max_tokens', 'tokenizer', 'key-file', 'sort_key', 'PWD', 'keyboard', 'token_count', 'monkey']) expect(isSecretName(n), n).toBe(false);
  });

  it('marks with the kind and the first 4 hex digits of the secret\'s SHA-256 (the same secret, the same marker)', () => {
    expect(redactionMarker('jwt', 'abc')).toBe('[REDACTED:jwt:ba78]');
    const a = redactText('DB_PASSWORD=hunter22 and DB_PASSWORD=hunter22').text.match(MARKER);
    expect(a).toHaveLength(2);
    expect(a?.[0]).toBe(a?.[1]);
  });

  it('is idempotent: redacting a redacted text changes nothing', () => {
    for (const { text } of POSITIVES) {
      const once = redactText(text).text;
      expect(redactText(once)).toEqual({ text: once, count: 0 });
    }
  });
});

describe('what redaction keeps', () => {
  it('keeps JSON text valid, its key order, escapes and big integers: only the secret changes', () => {
    const line = `{"z":1,"command":"curl -H \\"Authorization: Bearer ${x(30)}\\" \\t\\\\ \\u00e9","a":123456789012345678901234567890,"pem":"-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEE\\n-----END EC PRIVATE KEY-----","after":"é"}`;
    const r = redactText(line);
    expect(r.count).toBe(2);
    expect(() => JSON.parse(r.text) as unknown).not.toThrow();
    expect(Object.keys(JSON.parse(r.text) as object)).toEqual(['z', 'command', 'a', 'pem', 'after']);
    expect(r.text).toContain('"a":123456789012345678901234567890');
    expect(r.text.replace(MARKER, '#')).toBe(line.replace(x(30), '#').replace(/-----BEGIN EC PRIVATE KEY-----.*-----END EC PRIVATE KEY-----/, '#'));
  });

  it('keeps JSON valid whatever surrounds a secret (property: random JSON strings around real shapes)', () => {
    const secrets = POSITIVES.map((p) => p.text);
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...secrets), fc.string(), fc.string(), (before, secret, after, key) => {
        const line = JSON.stringify({ [key]: `${before}${secret}${after}`, n: 1 });
        const r = redactText(line);
        const back = JSON.parse(r.text) as Record<string, unknown>;
        expect(Object.keys(back)).toEqual(Object.keys(JSON.parse(line) as object));
        expect(back['n']).toBe(1);
      }),
      { seed: 10, numRuns: 3_000 },
    );
  });

  it('keeps bytes that are not UTF-8 as they are (Latin-1 in, Latin-1 out)', () => {
    const raw = Buffer.concat([Buffer.from([0xff, 0xc3, 0x28]), Buffer.from(` token ghp_${x(36)} `), Buffer.from([0xe2, 0x82]), Buffer.from('é')]);
    const r = redactBytes(raw);
    expect(r.count).toBe(1);
    const marker = Buffer.from(redactionMarker('github_token', `ghp_${x(36)}`));
    expect(Buffer.compare(r.bytes, Buffer.concat([Buffer.from([0xff, 0xc3, 0x28]), Buffer.from(' token '), marker, Buffer.from(' '), Buffer.from([0xe2, 0x82]), Buffer.from('é')]))).toBe(0);
  });

  it('keeps injection payloads byte-equal (quotes, backslashes, tabs, newlines, SQL)', () => {
    const payloads = ["'); DROP TABLE tool_calls; --", 'a\\b\\\\c', 'tab\there\nnew "quoted" \'single\'', '\u0000\u0001 NUL', '${jndi:ldap://x}'];
    for (const p of payloads) {
      const line = JSON.stringify({ schema: 'toolcanon.event/v1', type: 'tool_call', ts: '2026-12-03T10:00:00.000Z', harness: 'claude_code', session_id: 's', turn_id: 't', call_id: `c-${p.length}`, model: 'm', tool: 'Bash', input: { command: p }, status: 'ok' });
      const o = decodeEvent(Buffer.from(line), 'x:1', '1970-01-01 00:00:00.000');
      expect(o.kind).toBe('row');
      if (o.kind !== 'row') continue;
      expect(o.row.command).toBe(p);
      expect(o.row.redactions).toBe(0);
      expect(o.row.raw_input).toBe(JSON.stringify({ command: p }));
    }
  });
});

describe('redaction in the decoder', () => {
  const secret = `ghp_${x(36)}`;
  const line = JSON.stringify({ schema: 'toolcanon.event/v1', type: 'tool_call', ts: '2026-12-03T10:00:00.000Z', harness: 'claude_code', session_id: 's', turn_id: 't', call_id: 'c1', model: 'm', tool: 'Bash', input: { command: `GH_TOKEN=${secret} gh pr list` }, status: 'error', error: `bad credentials ${secret}`, output: `echo ${secret}` });

  it('redacts the stored texts, flags the row and counts the secrets; sizes and estimates are of the call as received', () => {
    const on = decodeEvent(Buffer.from(line), 'x:1', '1970-01-01 00:00:00.000');
    const off = decodeEvent(Buffer.from(line), 'x:1', '1970-01-01 00:00:00.000', { maxEventBytes: 1 << 22, maxDepth: 128, redact: false });
    if (on.kind !== 'row' || off.kind !== 'row') throw new Error('expected rows');
    expect(JSON.stringify(on.row)).not.toContain(secret);
    expect(on.row.flags).toContain('redacted');
    expect(on.row.redactions).toBe(2);
    expect(on.row.command).toMatch(/^GH_TOKEN=\[REDACTED:github_token:[0-9a-f]{4}\] gh pr list$/);
    expect(on.row.input_bytes).toBe(off.row.input_bytes);
    expect(on.row.output_bytes).toBe(off.row.output_bytes);
    expect(on.outputClass).toBe(off.outputClass);
    expect(on.row.event_id).toBe(off.row.event_id);
    expect(off.row.command).toBe(`GH_TOKEN=${secret} gh pr list`);
    expect(off.row.flags).not.toContain('redacted');
  });

  it('redacts dead letters: the bytes and the detail', () => {
    const broken = `${line.slice(0, -20)} ${secret}`;
    const o = decodeEvent(Buffer.from(broken), 'x:1', '1970-01-01 00:00:00.000');
    if (o.kind !== 'dead') throw new Error('expected a dead letter');
    expect(Buffer.from(o.dead.raw).toString()).not.toContain(secret);
    expect(o.dead.detail).not.toContain(secret);
    expect(o.dead.redactions).toBeGreaterThanOrEqual(2);
  });

  it('is on unless TOOLCANON_REDACT says 0, false, off or no', () => {
    expect(redactionFromEnv({})).toBe(true);
    expect(redactionFromEnv({ TOOLCANON_REDACT: '1' })).toBe(true);
    for (const v of ['0', 'false', 'OFF', 'no']) expect(redactionFromEnv({ TOOLCANON_REDACT: v })).toBe(false);
  });

  it('redacts every short field of a tool call and of a usage exactly as each field redacted on its own (property: secrets, look-alikes and plain text in any field)', () => {
    const pieces = [...POSITIVES.map((p) => p.text), 'max_tokens=4096', 'tokenizer', 'sk-', 'key', 'plain', 'https://h/x', ''];
    const field = fc.tuple(fc.constantFrom(...pieces), fc.string({ maxLength: 8 }), fc.constantFrom(...pieces)).map(([a, b, c]) => `${a}${b}${c}`);
    const nonEmpty = field.filter((f) => f !== '' && f.length <= 256);
    let redactedCases = 0;
    fc.assert(
      fc.property(nonEmpty, field, nonEmpty, nonEmpty, field, nonEmpty, field, (session, agent, call, tool, model, request, error) => {
        const base = { schema: 'toolcanon.event/v1', ts: '2026-12-03T10:00:00.000Z', harness: 'claude_code', session_id: session, turn_id: 't', model };
        const call1 = JSON.stringify({ ...base, type: 'tool_call', agent_id: agent, call_id: call, tool: tool.slice(0, 128), input: {}, status: 'error', error });
        const usage = JSON.stringify({ ...base, type: 'usage', agent_id: agent, request_id: request, input_tokens: 1, output_tokens: 2 });
        const want = (t: string): string => redactText(t).text;
        const c = decodeEvent(Buffer.from(call1), 'x:1', '1970-01-01 00:00:00.000');
        if (c.kind === 'row') {
          expect([c.row.session_id, c.row.agent_id, c.row.call_id, c.row.model, c.row.error]).toEqual([want(session), want(agent), want(call), want(model), want(error)]);
          const n = [session, agent, call, tool.slice(0, 128), model, error].reduce((k, t) => k + redactText(t).count, 0);
          expect(c.row.redactions).toBe(n);
          if (n > 0) redactedCases++;
        }
        const u = decodeEvent(Buffer.from(usage), 'x:2', '1970-01-01 00:00:00.000');
        if (u.kind === 'usage') expect([u.usage.session_id, u.usage.agent_id, u.usage.model, u.usage.request_id]).toEqual([want(session), want(agent), want(model), want(request)]);
      }),
      { seed: 20261204, numRuns: 2_000 },
    );
    expect(redactedCases).toBeGreaterThan(500);
  });

  it('the counting forms, the remembered one included, give what redactText gives, on a first call, a remembered one and after the memo is emptied', () => {
    const texts = [...POSITIVES.map((p) => p.text), ...POSITIVES.map((p) => p.secret), 'max_tokens=4096', 'claude-opus-4', 'Bash', 'session-1', 'x'.repeat(64), `${'x'.repeat(50)} ghp_${x(36)}`, ''];
    for (let round = 0; round < 3; round++) {
      // Round 1 is past the memo's size (4096 distinct texts): every text is forgotten at least once.
      const fill = round === 1 ? Array.from({ length: 5000 }, (_, i) => `s-${i}`) : [];
      for (const t of [...fill, ...texts]) {
        const want = redactText(t);
        const counted = { count: 3 };
        const short = { count: 5 };
        expect(redactCounted(t, counted)).toBe(want.text);
        expect(redactShortCounted(t, short)).toBe(want.text);
        expect(redactShortCounted(t, short)).toBe(want.text);
        expect(counted.count).toBe(3 + want.count);
        expect(short.count).toBe(5 + 2 * want.count);
      }
    }
    expect(texts.filter((t) => redactText(t).count > 0).length).toBeGreaterThan(20);
  });

  it('the remembered form answers each text for itself when texts of one length alternate (the last text of each length is remembered apart)', () => {
    const secret = `ghp_${x(36)}`;
    const plain = 'p'.repeat(secret.length);
    const other = `ghp_${x(36).split('').reverse().join('')}`;
    expect(other.length).toBe(secret.length);
    const into = { count: 0 };
    const seen: string[] = [];
    for (let i = 0; i < 12; i++) for (const t of [secret, plain, other, `${plain}`]) seen.push(redactShortCounted(t, into));
    for (let i = 0; i < seen.length; i += 4) {
      expect(seen[i]).toBe(redactText(secret).text);
      expect(seen[i + 1]).toBe(plain);
      expect(seen[i + 2]).toBe(redactText(other).text);
      expect(seen[i + 3]).toBe(plain);
    }
    expect(seen[0]).not.toBe(seen[2]);
    expect(into.count).toBe(24);
  });

  it('every name isSecretName accepts holds one of NAME_WORD (the named rules reject the others inside the expression, so nothing a name would redact is lost)', () => {
    const word = new RegExp(NAME_WORD, 'i');
    const part = fc.oneof(
      fc.constantFrom('secret', 'token', 'password', 'passwd', 'passphrase', 'credential', 'credentials', 'key', 'keys', 'api', 'access', 'private', 'auth', 'ssh', 'app', 'client', 'Key', 'KEY', 'Token', 'SECRET', 'apikey', 'ApiKey', 'pass', 'pwd', 'monkey', 'sort'),
      fc.stringMatching(/^[A-Za-z0-9]{1,8}$/),
    );
    const name = fc.tuple(fc.array(part, { minLength: 1, maxLength: 5 }), fc.constantFrom('_', '-', '.', '', '__')).map(([ps, sep]) => ps.join(sep));
    let secrets = 0;
    fc.assert(
      fc.property(name, (n) => {
        if (!isSecretName(n)) return true;
        secrets++;
        return word.test(n);
      }),
      { numRuns: 20000 },
    );
    expect(secrets).toBeGreaterThan(2000);
    for (const r of REDACTION_RULES.filter((rule) => rule.named)) expect(r.pattern).toContain(NAME_WORD);
  });
});

describe('a large input (over 1 MiB) is redacted as one reading of it would be', () => {
  // redactBytes reads a large input in parts of 64 KiB reaching 4 KiB into their neighbours
  // before it decides nothing is there (src/redact/redact.ts, holdsNoPlace): every secret is
  // found wherever it lies, across a part's edges too, and the result is the whole reading's.
  const MiB = 1 << 20;
  const filler = (n: number): Buffer => Buffer.from(x(n, 'lorem ipsum dolor sit amet, '));
  const W = 64 * 1024;
  const places = [0, W - 40, W - 3, W, W + 1, 2 * W - 4096 - 2, 2 * W + 4095, 3 * W - 1, MiB - 2, MiB + W - 7, 4 * MiB + 100];

  it.each(POSITIVES)('finds $kind at every edge of the parts', ({ text }) => {
    for (const at of places) {
      const secret = Buffer.from(` ${text} `);
      const big = Buffer.concat([filler(at), secret, filler(4 * MiB + 300 - at)]);
      const r = redactBytes(big);
      const whole = redactText(big.toString('latin1'));
      expect(r.count, `at ${at}`).toBe(whole.count);
      expect(r.count, `at ${at}`).toBeGreaterThan(0);
      expect(r.bytes.equals(Buffer.from(whole.text, 'latin1')), `at ${at}`).toBe(true);
    }
  });

  it('gives a large input without secrets back as it is, not a copy', () => {
    const big = filler(5 * MiB);
    const r = redactBytes(big);
    expect(r.count).toBe(0);
    expect(r.bytes.buffer).toBe(big.buffer);
  });
});
