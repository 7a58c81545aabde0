// Secret redaction end to end (issue 10): replay and import into the real engine keep no secret
// in any table (rows, dead letters, MCP events, derived tables), flag and count what was
// redacted, and report it; --no-redact and TOOLCANON_REDACT=0 keep the inputs verbatim.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadImporter } from '../../src/importers/registry.ts';
import { runImport } from '../../src/pipeline/import.ts';
import { replayPaths, type PipelineCounts } from '../../src/pipeline/batch-writer.ts';
import { toolsReportSql } from '../../src/report/sql.ts';
import { INSERT_COLUMNS, type ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { makeTempDir, openTempSink } from '../helpers/db.ts';
import { ROOT, runCli } from '../helpers/worker.ts';

const FILES = [join(ROOT, 'fixtures/secrets/calls.jsonl'), join(ROOT, 'fixtures/bad/secrets.jsonl')];
const INPUT = FILES.map((f) => readFileSync(f, 'utf8')).join('');

/**
 * The secrets the fixture holds, found with patterns of this test's own (not the redactor's),
 * so that a rule that stops matching fails here.
 */
const SECRETS: readonly string[] = [
  /sk-ant-api03-[A-Za-z0-9_-]+/g, /sk-proj-[A-Za-z0-9_-]+/g, /xai-[A-Za-z0-9]+/g, /AIza[A-Za-z0-9_-]{35}/g, /ghp_[A-Za-z0-9]{36}/g,
  /glpat-[A-Za-z0-9]{20}/g, /AKIAIOSFODNN7EXAMPLE/g, /wJalrXUtnFEMI\/K7MDENG\/bPxRfiCYEXAMPLEKEY/g, /xoxb-[0-9A-Za-z-]+/g,
  /B[A-Z0-9]{10}\/[A-Za-z0-9]{24}/g, /eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9\.[A-Za-z0-9_.-]+/g, /dXNlcjpodW50ZXIyaHVudGVyMg==/g,
  /b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ/g, /correct-horse-battery/g, /s3cr3t-Pa55/g, /tok_live_abc123/g, /hunter2hunter2/g,
  /s\.AbCdEf123456/g, /Tr0ub4dor&3/g, /cs_9f8e7d6c/g, /sk_live_51Habc0123456789/g, /(?<=Bearer )[A-Za-z0-9]{40}/g,
].flatMap((re) => [...new Set([...INPUT.matchAll(re)].map((m) => m[0]))]);

const TABLES = Object.keys(INSERT_COLUMNS);

/** Every row of every table as JSON text (raw bytes of dead letters included). */
async function everything(sink: ClickHouseSink): Promise<string> {
  const parts: string[] = [];
  for (const t of TABLES) parts.push(JSON.stringify(await sink.queryRows(`SELECT * FROM ${t}`)));
  return parts.join('\n');
}

function leaked(text: string): string[] {
  return SECRETS.filter((s) => text.includes(s) || text.includes(JSON.stringify(s).slice(1, -1)));
}

it('the fixture holds one secret (at least) of every rule, 25 in all', () => {
  expect(SECRETS.length).toBe(25);
});

describe('replay with redaction (the default)', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let counts: PipelineCounts;
  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('redact-replay'));
    counts = await replayPaths(FILES, sink);
  }, 120_000);
  afterAll(async () => cleanup());

  it('keeps no secret in any table', async () => {
    const all = await everything(sink);
    expect(all.length).toBeGreaterThan(10_000);
    expect(leaked(all)).toEqual([]);
    expect(all).toContain('[REDACTED:anthropic_key:');
  });

  it('loses nothing: events in = rows + dead letters', () => {
    expect(counts.eventsRead).toBe(INPUT.split('\n').filter((l) => l.trim() !== '').length);
    expect(counts.rowsWritten + counts.deadLetters).toBe(counts.eventsRead);
    expect(counts.deadLetters).toBe(1);
    // 23 in the calls, 1 in the MCP status error, 1 in the broken line.
    expect(counts.secretsRedacted).toBe(25);
  });

  it('flags the redacted rows and counts their secrets; the look-alikes and the injection payloads stay byte-equal', async () => {
    const rows = await sink.queryRows<{ call_id: string; redactions: number; flagged: number; command: string | null }>(
      "SELECT call_id, redactions, has(flags, 'redacted') AS flagged, command FROM tool_calls FINAL ORDER BY call_id",
    );
    const redacted = rows.filter((r) => r.call_id.startsWith('toolu_secret_'));
    expect(redacted).toHaveLength(19);
    for (const r of redacted) {
      expect(r.redactions, r.call_id).toBeGreaterThan(0);
      expect(Number(r.flagged), r.call_id).toBe(1);
    }
    const lookalikes = rows.filter((r) => r.call_id.startsWith('toolu_lookalike_'));
    expect(lookalikes.map((r) => r.redactions)).toEqual([0, 0, 0]);
    const input = INPUT.split('\n').filter((l) => l.includes('toolu_lookalike_')).map((l) => (JSON.parse(l) as { input: { command: string } }).input.command);
    expect(lookalikes.map((r) => r.command)).toEqual(input);
    expect(input[2]).toContain("'); DROP TABLE tool_calls; --");
  });

  it('keeps raw_input valid JSON with its key order and its big integer exact', async () => {
    const [row] = await sink.queryRows<{ raw_input: string }>("SELECT raw_input FROM tool_calls FINAL WHERE call_id = 'toolu_secret_write_env'");
    expect(row?.raw_input).toMatch(/^\{"file_path":"\/srv\/app\/\.env","content":"STRIPE_SECRET_KEY=\[REDACTED:[a-z_]+:[0-9a-f]{4}\]\\nAPP_NAME=demo\\n.*","seed":123456789012345678901234567890\}$/);
  });

  it('reports the redacted calls in report tools', async () => {
    const rows = await sink.queryRows<{ redacted: number | string; secrets_redacted: number | string }>(toolsReportSql('namespace'));
    const redacted = rows.reduce((n, r) => n + Number(r.redacted), 0);
    const secrets = rows.reduce((n, r) => n + Number(r.secrets_redacted), 0);
    expect(redacted).toBe(19);
    expect(secrets).toBe(23);
  });
});

describe('the CLI: redaction on by default, off with --no-redact or TOOLCANON_REDACT=0', () => {
  const tmp = makeTempDir('redact-cli');
  afterAll(() => tmp.cleanup());

  async function replayAndDump(db: string, extra: readonly string[], env: Record<string, string> = {}): Promise<string> {
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      const r = await runCli(['replay', ...FILES, '--db', db, '--no-progress', ...extra]);
      expect(r.code, r.stderr).toBe(0);
      const q = await runCli(['query', 'SELECT raw_input, command, error FROM tool_calls FINAL', '--db', db, '--format', 'json']);
      expect(q.code, q.stderr).toBe(0);
      const d = await runCli(['query', 'SELECT raw FROM dead_letters FINAL', '--db', db, '--format', 'json']);
      return q.stdout + d.stdout + r.stdout + r.stderr;
    } finally {
      process.env = saved;
    }
  }

  it('redacts by default', async () => {
    expect(leaked(await replayAndDump(join(tmp.dir, 'on'), []))).toEqual([]);
  }, 120_000);

  it('keeps every secret with --no-redact', async () => {
    const out = await replayAndDump(join(tmp.dir, 'off'), ['--no-redact']);
    expect(leaked(out).length).toBeGreaterThanOrEqual(20);
    expect(out).not.toContain('[REDACTED:');
  }, 120_000);

  it('keeps every secret with TOOLCANON_REDACT=0', async () => {
    const out = await replayAndDump(join(tmp.dir, 'env'), [], { TOOLCANON_REDACT: '0' });
    expect(leaked(out).length).toBeGreaterThanOrEqual(20);
  }, 120_000);
});

describe('import: a harness log with secrets, and a malformed record holding one', () => {
  const tmp = makeTempDir('redact-import');
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  const secret = `ghp_${'Zq9'.repeat(12)}`;
  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('redact-import-db'));
    const dir = join(tmp.dir, 'projects', '-home-ada-app');
    mkdirSync(dir, { recursive: true });
    const base = { isSidechain: false, userType: 'external', cwd: '/home/ada/app', sessionId: 'redact-import-session', version: '2.1.42' };
    const lines = [
      JSON.stringify({ ...base, parentUuid: null, type: 'assistant', uuid: 'a1', timestamp: '2026-12-03T10:00:00.000Z', requestId: 'req_1', message: { model: 'claude-sonnet-4-5', id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_imp_1', name: 'Bash', input: { command: `GH_TOKEN=${secret} gh repo list`, description: 'list repos' } }], usage: { input_tokens: 10, output_tokens: 5 } } }),
      JSON.stringify({ ...base, parentUuid: 'a1', type: 'user', uuid: 'u1', timestamp: '2026-12-03T10:00:01.000Z', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_imp_1', content: `token ${secret} is valid` }] } }),
      `{"type":"assistant","message":{"content":[{"type":"tool_use","input":{"command":"curl -H 'Authorization: Bearer ${secret}'`,
    ];
    writeFileSync(join(dir, 'session.jsonl'), `${lines.join('\n')}\n`);
    await runImport(await loadImporter('claude-code'), [join(tmp.dir, 'projects')], sink);
  }, 120_000);
  afterAll(async () => {
    await cleanup();
    tmp.cleanup();
  });

  it('stores the tool call redacted and the malformed record as a redacted dead letter', async () => {
    const [call] = await sink.queryRows<{ command: string; redactions: number }>("SELECT command, redactions FROM tool_calls FINAL WHERE call_id = 'toolu_imp_1'");
    expect(call?.command).toMatch(/^GH_TOKEN=\[REDACTED:github_token:[0-9a-f]{4}\] gh repo list$/);
    expect(call?.redactions).toBe(1);
    const dead = await sink.queryRows<{ reason: string; redactions: number }>('SELECT reason, redactions FROM dead_letters FINAL');
    expect(dead).toEqual([{ reason: 'import_malformed', redactions: 1 }]);
    const all = await everything(sink);
    expect(all).not.toContain(secret);
  });
});
