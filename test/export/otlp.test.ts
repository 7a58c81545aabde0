// `toolcanon export otlp` against a real OTLP/HTTP receiver started by this test
// (scripts/otlp-receiver.sh: the OTLP protobufs decoded by the OpenTelemetry project's Java
// bindings, io.opentelemetry.proto:opentelemetry-proto from Maven Central). The fixtures are
// replayed into ClickHouse, on both engines with the same assertions (test/helpers/engines.ts:
// embedded chdb, then a ClickHouse server; the server's export must equal the embedded one span
// for span); what the receiver got is compared with what the tables hold,
// read back independently with `toolcanon query`. Under CI=true a receiver that cannot start is a
// failure, elsewhere a loud skip.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';
import { cliEnv, forEachEngine } from '../helpers/engines.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const PORT = process.env['OTLP_RECEIVER_PORT'] ?? '14318';
const tmp = makeTempDir('export-otlp');
/** The database of the engine whose tests run now (the engines' describes run one after the other). */
let flags: readonly string[] = [];
/** The spans each engine's export gave, as sorted JSON texts. */
const exportedBy = new Map<string, string[]>();
afterAll(() => tmp.cleanup());

function startReceiver(): string | null {
  const r = spawnSync('bash', [join(ROOT, 'scripts/otlp-receiver.sh'), 'start'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, OTLP_RECEIVER_PORT: PORT }, timeout: 300_000 });
  const line = r.stdout.split('\n').find((l) => l.startsWith('OTLP_RECEIVER_URL='));
  if (r.status === 0 && line !== undefined) return line.slice('OTLP_RECEIVER_URL='.length).trim();
  const why = `scripts/otlp-receiver.sh start failed (exit ${r.status}): ${r.stderr.trim().split('\n').slice(-5).join(' | ')}`;
  if (process.env['CI'] === 'true') throw new Error(why);
  console.warn(`SKIPPING test/export/otlp.test.ts: ${why}`);
  return null;
}
const receiver = startReceiver();

function toolcanon(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args, ...flags], { cwd: tmp.dir, encoding: 'utf8', timeout: 120_000, env: cliEnv() });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
function jsonLines(text: string): Record<string, unknown>[] {
  return text.trim() === '' ? [] : text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}
function query(sql: string): Record<string, unknown>[] {
  const r = toolcanon(['query', sql, '--format', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return jsonLines(r.stdout);
}
function summaryOf(stdout: string): Record<string, number> {
  return Object.fromEntries(jsonLines(stdout).map((r) => [String(r['metric']), Number(r['value'])]));
}

interface AnyValue { stringValue?: string; intValue?: string; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: AnyValue[] } }
interface ReceivedSpan {
  resource: { attributes?: { key: string; value: AnyValue }[] };
  scope: { name?: string; version?: string };
  span: {
    traceId: string;
    spanId: string;
    parentSpanId?: string;
    name: string;
    kind: string;
    startTimeUnixNano: string;
    endTimeUnixNano: string;
    attributes?: { key: string; value: AnyValue }[];
    status?: { code?: string; message?: string };
  };
}
const attrs = (s: ReceivedSpan): Record<string, AnyValue> => Object.fromEntries((s.span.attributes ?? []).map((a) => [a.key, a.value]));

async function receiverGet(path: string): Promise<string> {
  const res = await fetch(`${receiver}${path}`, { method: path === '/debug/reset' ? 'POST' : 'GET' });
  expect(res.status).toBe(200);
  return res.text();
}
async function received(): Promise<ReceivedSpan[]> {
  return jsonLines(await receiverGet('/debug/spans')) as unknown as ReceivedSpan[];
}
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

await forEachEngine('test/export/otlp.test.ts', (engine) => describe.skipIf(receiver === null)('export otlp to a real OTLP/HTTP receiver', () => {
  let toolCalls = 0;
  let usage = 0;
  let sessions = 0;
  let protobufSpans: ReceivedSpan[] = [];

  beforeAll(async () => {
    flags = (await engine.database('export')).flags;
    const replay = toolcanon(['replay', join(ROOT, 'fixtures'), '--format', 'json']);
    expect(replay.code, replay.stderr).toBe(0);
    toolCalls = Number(query('SELECT count() AS n FROM tool_calls FINAL')[0]?.['n']);
    usage = Number(query("SELECT count() AS n FROM token_usage FINAL WHERE source = 'observed'")[0]?.['n']);
    sessions = Number(query("SELECT uniqExact(session_id) AS n FROM (SELECT session_id FROM tool_calls FINAL UNION ALL SELECT session_id FROM token_usage FINAL WHERE source = 'observed')")[0]?.['n']);
    expect(toolCalls).toBeGreaterThan(100);
    expect(usage).toBeGreaterThan(0);
    await receiverGet('/debug/reset');
    const r = toolcanon(['export', 'otlp', '--endpoint', receiver as string, '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const summary = summaryOf(r.stdout);
    expect(summary).toMatchObject({ spans_exported: toolCalls + usage + sessions, 'spans_exported.execute_tool': toolCalls, 'spans_exported.chat': usage, traces: sessions, spans_failed: 0 });
    protobufSpans = await received();
    exportedBy.set(engine.name, protobufSpans.map((x) => JSON.stringify(x)).sort());
    expect(JSON.parse(await receiverGet('/debug/requests'))).toMatchObject({ protobuf: summary['requests'], json: 0 });
  });

  it.runIf(engine.name === 'server')('exports from the server exactly the spans it exports from the embedded engine', () => {
    const embedded = exportedBy.get('embedded');
    expect(embedded, 'the embedded engine\'s describe ran first').toBeDefined();
    expect(exportedBy.get('server')).toEqual(embedded);
  });

  it('received one span per tool call, usage record and session, each session one trace', () => {
    expect(protobufSpans).toHaveLength(toolCalls + usage + sessions);
    const byOp = (op: string) => protobufSpans.filter((s) => attrs(s)['gen_ai.operation.name']?.stringValue === op);
    expect(byOp('execute_tool')).toHaveLength(toolCalls);
    expect(byOp('chat')).toHaveLength(usage);
    expect(byOp('invoke_agent')).toHaveLength(sessions);
    expect(new Set(protobufSpans.map((s) => s.span.traceId)).size).toBe(sessions);
    expect(new Set(protobufSpans.map((s) => `${s.span.traceId}/${s.span.spanId}`)).size).toBe(protobufSpans.length);
    // Every tool and chat span hangs under its session's invoke_agent span, in the same trace.
    const roots = new Map(byOp('invoke_agent').map((s) => [s.span.traceId, s.span.spanId]));
    for (const s of [...byOp('execute_tool'), ...byOp('chat')]) expect(s.span.parentSpanId).toBe(roots.get(s.span.traceId));
    for (const s of protobufSpans) expect(s.scope.name).toBe('toolcanon.export.otlp');
  });

  it('an execute_tool span carries the conventions names and the stored values (an error call)', () => {
    const row = query(`SELECT event_id, session_id, call_id, tool_name, harness, error, toUnixTimestamp64Milli(ts) AS ts_ms, duration_ms, kind, namespace, path, command, pattern
      FROM tool_calls FINAL WHERE status = 'error' AND duration_ms IS NOT NULL ORDER BY event_id LIMIT 1`)[0];
    expect(row, 'the fixtures hold a failed call with a duration').toBeDefined();
    const r = row as Record<string, string | number | null>;
    const span = protobufSpans.find((s) => attrs(s)['toolcanon.event_id']?.stringValue === r['event_id']);
    expect(span).toBeDefined();
    const s = span as ReceivedSpan;
    const a = attrs(s);
    expect(s.span.name).toBe(`execute_tool ${r['tool_name']}`);
    expect(s.span.kind).toBe('SPAN_KIND_INTERNAL');
    expect(a['gen_ai.operation.name']?.stringValue).toBe('execute_tool');
    expect(a['gen_ai.tool.name']?.stringValue).toBe(r['tool_name']);
    expect(a['gen_ai.tool.call.id']?.stringValue).toBe(r['call_id']);
    expect(a['gen_ai.conversation.id']?.stringValue).toBe(r['session_id']);
    expect(a['error.type']?.stringValue).toBe('tool_error');
    expect(s.span.status?.code).toBe('STATUS_CODE_ERROR');
    expect(s.span.status?.message).toBe(String(r['error']).slice(0, 1024));
    expect(a['toolcanon.kind']?.stringValue).toBe(r['kind']);
    expect(a['toolcanon.namespace']?.stringValue).toBe(r['namespace']);
    for (const f of ['path', 'command', 'pattern'] as const) expect(a[`toolcanon.${f}`]?.stringValue).toBe(r[f] ?? undefined);
    const startNs = BigInt(r['ts_ms'] as string) * 1_000_000n;
    expect(BigInt(s.span.startTimeUnixNano)).toBe(startNs);
    expect(BigInt(s.span.endTimeUnixNano)).toBe(startNs + BigInt(r['duration_ms'] as string) * 1_000_000n);
    // Ids are derived from the session and event ids (sha-256), so a re-export is the same span.
    expect(s.span.traceId).toBe(sha(`toolcanon/trace\0${r['session_id']}`).slice(0, 32));
    expect(s.span.spanId).toBe(sha(`toolcanon/tool_call\0${r['event_id']}`).slice(0, 16));
    expect(s.resource.attributes?.find((x) => x.key === 'service.name')?.value.stringValue).toBe(r['harness']);
    // Raw inputs only on request.
    expect(protobufSpans.some((x) => 'gen_ai.tool.call.arguments' in attrs(x))).toBe(false);
  });

  it('a chat span carries gen_ai.usage.* tokens as stored (grok: input already includes cache)', () => {
    const rows = query(`SELECT event_id, harness, model, request_id, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens
      FROM token_usage FINAL WHERE source = 'observed' ORDER BY event_id`);
    expect(rows.length).toBe(usage);
    for (const r of rows) {
      const s = protobufSpans.find((x) => attrs(x)['toolcanon.event_id']?.stringValue === r['event_id'] && attrs(x)['gen_ai.operation.name']?.stringValue === 'chat');
      expect(s, String(r['event_id'])).toBeDefined();
      const a = attrs(s as ReceivedSpan);
      expect((s as ReceivedSpan).span.name).toBe(`chat ${r['model']}`);
      expect((s as ReceivedSpan).span.kind).toBe('SPAN_KIND_CLIENT');
      expect(a['gen_ai.request.model']?.stringValue).toBe(r['model']);
      expect(a['gen_ai.provider.name']?.stringValue).toBe(String(r['harness']).startsWith('grok') ? 'x_ai' : a['gen_ai.provider.name']?.stringValue);
      const int = (k: string) => (a[k]?.intValue === undefined ? null : String(a[k]?.intValue));
      const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
      expect(String(r['harness'])).toMatch(/^grok_build/);
      expect(int('gen_ai.usage.input_tokens')).toBe(str(r['input_tokens']));
      expect(int('gen_ai.usage.output_tokens')).toBe(str(r['output_tokens']));
      expect(int('gen_ai.usage.cache_read.input_tokens')).toBe(str(r['cache_read_tokens']));
      expect(int('gen_ai.usage.cache_creation.input_tokens')).toBe(str(r['cache_write_tokens']));
      expect(int('gen_ai.usage.reasoning.output_tokens')).toBe(str(r['reasoning_tokens']));
    }
  });

  it('http/json, small pages, one harness, raw input: the same span ids again (a re-export is idempotent)', async () => {
    const harness = 'codex';
    await receiverGet('/debug/reset');
    const r = toolcanon(['export', 'otlp', '--endpoint', `${receiver}/v1/traces`, '--protocol', 'http/json', '--batch-spans', '7', '--harness', harness, '--include-raw-input', '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const spans = await received();
    const expected = protobufSpans.filter((s) => s.resource.attributes?.find((x) => x.key === 'service.name')?.value.stringValue === harness);
    expect(expected.length).toBeGreaterThan(7);
    expect(spans.map((s) => `${s.span.traceId}/${s.span.spanId}`).sort()).toEqual(expected.map((s) => `${s.span.traceId}/${s.span.spanId}`).sort());
    const summary = summaryOf(r.stdout);
    expect(summary['requests']).toBeGreaterThan(2);
    expect(JSON.parse(await receiverGet('/debug/requests'))).toMatchObject({ protobuf: 0, json: summary['requests'] });
    const raw = new Map(query(`SELECT event_id, raw_input FROM tool_calls FINAL WHERE harness = '${harness}'`).map((x) => [x['event_id'], x['raw_input']]));
    const tools = spans.filter((s) => attrs(s)['gen_ai.operation.name']?.stringValue === 'execute_tool');
    expect(tools.length).toBe(raw.size);
    for (const s of tools) expect(attrs(s)['gen_ai.tool.call.arguments']?.stringValue ?? '').toBe(raw.get(attrs(s)['toolcanon.event_id']?.stringValue));
  });

  it('a refusing endpoint: exit 1, one line naming the URL, no stack', () => {
    const url = `${receiver}/not-otlp`;
    const r = toolcanon(['export', 'otlp', '--endpoint', url, '--format', 'json']);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n').filter((l) => l.startsWith('toolcanon:'));
    expect(lines).toEqual([`toolcanon: the OTLP endpoint ${url} refused the spans with HTTP 404: no such endpoint: /not-otlp`]);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(summaryOf(r.stdout)).toMatchObject({ spans_exported: 0, spans_failed: sessions > 1000 ? 1000 : sessions });
  });

  it('an unreachable endpoint: exit 1, one line naming the URL', () => {
    // A port nothing listens on: take one from the OS and close it again.
    const port = execFileSync(process.execPath, ['-e', "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"], { encoding: 'utf8' }).trim();
    const url = `http://127.0.0.1:${port}/v1/traces`;
    const r = toolcanon(['export', 'otlp', '--endpoint', url, '--timeout-ms', '3000']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`toolcanon: cannot reach the OTLP endpoint ${url} (ECONNREFUSED)`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('usage errors exit 2 before anything is opened', () => {
    expect(toolcanon(['export', 'otlp']).code).toBe(2);
    expect(toolcanon(['export', 'otlp', '--endpoint', receiver as string, '--protocol', 'grpc']).stderr).toContain('--protocol must be one of http/protobuf, http/json');
    expect(toolcanon(['export', 'otlp', '--endpoint', 'not a url']).code).toBe(2);
    expect(toolcanon(['export', 'jaeger', '--endpoint', receiver as string]).code).toBe(2);
    expect(toolcanon(['export', 'otlp', '--endpoint', receiver as string, '--since', '2026-12-31', '--until', '2026-12-01']).code).toBe(2);
    const help = toolcanon(['export', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('v1.41.0');
  });
}));
