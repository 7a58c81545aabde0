// The OpenClaw importer: its folders and file names, what it reads differently from pi (failures
// inside a result's details, Claude's parameter names), and the fixture folder (a ~/.openclaw
// layout with two agents, a checkpoint copy, a /reset archive and a backup) imported into a real
// embedded ClickHouse against the figures summed by hand in the fixture README.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openclawImporter } from '../../src/importers/openclaw/index.ts';
import { parseOpenclawFile } from '../../src/importers/openclaw/parser.ts';
import { defaultOpenclawPaths, isTranscript, listOpenclawFiles, sessionOfFile } from '../../src/importers/openclaw/paths.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, makeTempDir, openTempSink } from '../helpers/db.ts';

const FIXTURES = new URL('./fixtures-openclaw/', import.meta.url).pathname;
const OF_FIXTURES = `startsWith(source, '${FIXTURES}')`;
const USAGE_OF_FIXTURES = `startsWith(origin, '${FIXTURES}')`;
const S1 = '3b9e2c71-5d4a-4f86-9c10-7e2a1b4c8d55';
const S2 = 'a4d81f07-2c6e-4b3a-8f95-1e7c3d9b6a20';
const S3 = 'e7c2a9d4-1b58-4f03-b6e1-9d4a2c7f8e31';
const MAIN = join(FIXTURES, 'agents', 'main', 'sessions');
const MAIN_FILE = join(MAIN, `${S1}.jsonl`);
const CHECKPOINT_FILE = join(MAIN, `${S1}.checkpoint.0f3e2d1c-4b5a-4c69-8d7e-6f5a4b3c2d1e.jsonl`);
const RESET_FILE = join(MAIN, `${S2}.jsonl.reset.2026-10-14T08-59-58.120Z`);
const CODER_FILE = join(FIXTURES, 'agents', 'coder', 'sessions', `${S3}.jsonl`);

type Obj = Record<string, unknown>;

describe('openclaw paths', () => {
  it('defaults to ~/.openclaw, else a legacy state folder that exists, or $OPENCLAW_STATE_DIR / $CLAWDBOT_STATE_DIR', () => {
    const none = (): boolean => false;
    expect(defaultOpenclawPaths({}, '/home/u', none)).toEqual(['/home/u/.openclaw']);
    expect(defaultOpenclawPaths({}, '/home/u', (p) => p === '/home/u/.moltbot')).toEqual(['/home/u/.moltbot']);
    expect(defaultOpenclawPaths({}, '/home/u', (p) => p === '/home/u/.openclaw' || p === '/home/u/.clawdbot')).toEqual(['/home/u/.openclaw']);
    expect(defaultOpenclawPaths({ OPENCLAW_STATE_DIR: '/srv/claw' }, '/home/u', none)).toEqual(['/srv/claw']);
    expect(defaultOpenclawPaths({ CLAWDBOT_STATE_DIR: '~/bot' }, '/home/u', none)).toEqual(['/home/u/bot']);
    expect(defaultOpenclawPaths({ OPENCLAW_HOME: '/data/h' }, '/home/u', none)).toEqual(['/data/h/.openclaw']);
  });
  it('reads live, topic, checkpoint and archived transcripts in a sessions/ folder, not backups, traces or sessions.json', () => {
    expect(isTranscript('/s/agents/main/sessions/abc.jsonl')).toBe(true);
    expect(isTranscript('/s/agents/main/sessions/abc-topic-42.jsonl')).toBe(true);
    expect(isTranscript('/s/agents/main/sessions/abc.jsonl.deleted.2026-01-02T03-04-05.678Z')).toBe(true);
    expect(isTranscript('/s/agents/main/sessions/abc.jsonl.bak.2026-01-02T03-04-05.678Z')).toBe(false);
    expect(isTranscript('/s/agents/main/sessions/abc.trajectory.jsonl')).toBe(false);
    expect(isTranscript('/s/agents/main/sessions/sessions.json')).toBe(false);
    expect(isTranscript('/s/agents/main/abc.jsonl')).toBe(false);
    expect(listOpenclawFiles([FIXTURES])).toEqual([CODER_FILE, CHECKPOINT_FILE, MAIN_FILE, RESET_FILE]);
    expect(sessionOfFile(RESET_FILE)).toBe(S2);
    expect(sessionOfFile(CHECKPOINT_FILE)).toBe(S1);
    expect(sessionOfFile('/s/x/sessions/abc-topic-42.jsonl')).toBe('abc-topic-42');
  });
});

describe('openclaw parser', () => {
  it('makes a result that failed in its details an error with details.error, whatever isError says', () => {
    const header = { type: 'session', version: 3, id: 's-1', timestamp: '2026-10-14T09:00:00.000Z', cwd: '/w' };
    const assistant = { type: 'message', id: 'a1', parentId: null, timestamp: '2026-10-14T09:00:02.000Z', message: { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { file_path: '/w/MEMORY.md' } }], model: 'gpt-5.4', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 }, stopReason: 'toolUse', timestamp: 1 } };
    const text = JSON.stringify({ status: 'error', tool: 'read', error: "ENOENT: no such file or directory, access '/w/MEMORY.md'" }, null, 2);
    const result = { type: 'message', id: 'r1', parentId: 'a1', timestamp: '2026-10-14T09:00:02.050Z', message: { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text }], details: { status: 'error', tool: 'read', error: "ENOENT: no such file or directory, access '/w/MEMORY.md'" }, isError: false, timestamp: 2 } };
    const p = parseOpenclawFile('/h/.openclaw/agents/main/sessions/s-1.jsonl', Buffer.from([header, assistant, result].map((r) => JSON.stringify(r)).join('\n') + '\n'));
    const call = p.events.map((e) => JSON.parse(e.envelope.text) as Obj).find((e) => e['type'] === 'tool_call');
    expect(call).toMatchObject({ harness: 'openclaw', session_id: 's-1', status: 'error', error: "ENOENT: no such file or directory, access '/w/MEMORY.md'", output: text, duration_ms: 50 });
  });
});

describe('openclaw import of the fixture folder into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  let first: ImportSummary;
  const tmp = makeTempDir('openclaw-import');

  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('openclaw'));
    first = await runImport(openclawImporter, [FIXTURES], sink);
  });
  afterAll(async () => {
    await cleanup?.();
    tmp.cleanup();
  });

  it('stores one usage row per response, the checkpoint copy adding none, with the sums of the fixture README', async () => {
    const rows = await sink.queryRows<Record<string, string>>(
      `SELECT session_id, count() AS n, sum(input_tokens) AS input, sum(output_tokens) AS output, sum(cache_read_tokens) AS cr, sum(cache_write_tokens) AS cw
       FROM token_usage FINAL WHERE source = 'observed' AND harness = 'openclaw' AND ${USAGE_OF_FIXTURES} GROUP BY session_id ORDER BY session_id`,
    );
    expect(rows.map((r) => [r['session_id'], Number(r['n']), Number(r['input']), Number(r['output']), Number(r['cr']), Number(r['cw'])])).toEqual([
      [S1, 4, 13_555, 370, 44_160, 0],
      [S2, 1, 9800, 40, 0, 0],
      [S3, 2, 8, 230, 7200, 7510],
    ]);
  });

  it('stores every tool call once, with the status, kind and projection the files give', async () => {
    const rows = await sink.queryRows<Record<string, string | null>>(
      `SELECT call_id, namespace, tool_name, kind, path, \`offset\`, \`limit\`, status, error, arrayStringConcat(flags, ',') AS flags FROM tool_calls FINAL WHERE ${OF_FIXTURES} ORDER BY call_id`,
    );
    expect(rows.map((r) => [r['call_id'], r['tool_name'], r['status']])).toEqual([
      ['call_a1|fc_01', 'read', 'ok'],
      ['call_a2|fc_02', 'read', 'error'],
      ['call_a3|fc_03', 'exec', 'error'],
      ['call_b1|fc_04', 'write', 'ok'],
      ['call_b2|fc_05', 'edit', 'ok'],
      ['toolu_c1', 'read', 'ok'],
      ['toolu_c2', 'edit', 'pending'],
    ]);
    const byCall = Object.fromEntries(rows.map((r) => [r['call_id'], r]));
    expect(byCall['call_a1|fc_01']).toMatchObject({ namespace: 'openclaw', kind: 'read', path: '/home/kai/.openclaw/workspace/SOUL.md', flags: '' });
    expect(byCall['call_a2|fc_02']).toMatchObject({ error: "ENOENT: no such file or directory, access '/home/kai/.openclaw/workspace/MEMORY.md'" });
    expect(byCall['call_a3|fc_03']).toMatchObject({ error: "ls: cannot access 'memory': No such file or directory", flags: 'uncatalogued' });
    expect(byCall['call_b2|fc_05']).toMatchObject({ kind: 'edit', path: '/home/kai/.openclaw/workspace/USER.md' });
    expect(byCall['toolu_c1']).toMatchObject({ path: 'src/footer.html', offset: '1', limit: '40' });
  });

  it('accounts for every record: the checkpoint read again, the backup and sessions.json not read, no dead letter', async () => {
    expect(first.filesSeen).toBe(4);
    expect(first.malformedRecords).toBe(0);
    expect(first.counts.deadLetters).toBe(0);
    // main 4 + 5, checkpoint 2 + 3 (the same ids), reset 1, coder 2 + 2.
    expect(first.eventsEmitted).toBe(19);
    expect(first.skippedRecords).toEqual({ thinking_level_change: 2, custom: 5, usage_zero: 4 });
    const lines = [MAIN_FILE, CHECKPOINT_FILE, RESET_FILE, CODER_FILE].reduce((n, f) => n + readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '').length, 0);
    expect(first.recordsRead).toBe(lines);
    expect(await countOf(sink, `SELECT count() AS n FROM tool_calls FINAL WHERE ${OF_FIXTURES}`)).toBe(7);
  });

  it('changes no count when the same folder is imported again, and writes a damaged line as one dead letter', async () => {
    const again = await runImport(openclawImporter, [FIXTURES], sink);
    expect(again.filesUnchanged).toBe(4);
    expect(again.eventsEmitted).toBe(0);
    const dir = join(tmp.dir, 'agents', 'main', 'sessions');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'dmg-1.jsonl');
    const good = readFileSync(CODER_FILE, 'utf8').replaceAll(S3, 'dmg-1').replaceAll('toolu_c', 'toolu_d').split('\n').filter((l) => l !== '');
    const junk = '{"type":"message","message":{"role":"toolResult","toolCallId":';
    writeFileSync(file, [...good.slice(0, 3), junk, ...good.slice(3)].join('\n') + '\n');
    const s = await runImport(openclawImporter, [file], sink);
    expect(s.malformedRecords).toBe(1);
    expect(s.eventsEmitted).toBe(4);
    expect(await countOf(sink, `SELECT count() AS n FROM dead_letters FINAL WHERE source = '${file}:4' AND reason = 'import_malformed'`)).toBe(1);
  });
});
