// The Codebuff importer: its folders (three channels), the usage of an assistant message from its
// three places (metadata.usage, metadata.codebuff.usage, the run state's history), an OpenAI-style
// prompt_tokens taken apart from its cached part, the fixture's golden events and its import into a
// real embedded ClickHouse against the figures fixtures-codebuff/figures.py computes (plain json, no
// importer code), a chat rewritten whole re-imported (replaced, a new message added), a damaged
// message as a dead letter. No real sample exists: the test says so loudly.
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codebuffImporter } from '../../src/importers/codebuff/index.ts';
import { chatIdTime, defaultCodebuffPaths, sessionOf } from '../../src/importers/codebuff/paths.ts';
import { runImport, type ImportSummary } from '../../src/pipeline/import.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { makeTempDir, openTempSink } from '../helpers/db.ts';

const FIXTURES = new URL('./fixtures-codebuff/', import.meta.url).pathname.replace(/\/$/, '');
const CALC = 'manicode/calc/2025-12-20T12-00-00.000Z';
const SANDBOX = 'manicode-dev/sandbox/2025-12-22T09-30-00.000Z';
const CALC_FILE = join(FIXTURES, 'manicode/projects/calc/chats/2025-12-20T12-00-00.000Z/chat-messages.json');
type Obj = Record<string, unknown>;

describe('codebuff paths and parser', () => {
  it('reads ~/.config/<manicode channel>/projects, chats/*/chat-messages.json; the session is channel/project/chat', () => {
    expect(defaultCodebuffPaths('/home/u', () => false)).toEqual(['/home/u/.config/manicode/projects']);
    expect(defaultCodebuffPaths('/home/u', (p) => p.includes('-dev'))).toEqual(['/home/u/.config/manicode-dev/projects']);
    expect(sessionOf(CALC_FILE)).toEqual({ sessionId: CALC, chatId: '2025-12-20T12-00-00.000Z' });
    expect(chatIdTime('2025-12-14T10-00-00.000Z')).toBe('2025-12-14T10:00:00.000Z');
    expect(codebuffImporter.listFiles([FIXTURES]).map((f) => relative(FIXTURES, f))).toHaveLength(2);
  });
  it('one usage per assistant message with figures: Anthropic buckets as they are, prompt_tokens less its cached part, the run state as a fallback, the chat id\'s time when the message has none', () => {
    const usage = codebuffImporter.parseFile(CALC_FILE, readFileSync(CALC_FILE)).events.map((e) => JSON.parse(e.envelope.text) as Obj);
    expect(usage.map((u) => [u['request_id'], u['input_tokens'], u['output_tokens'], u['cache_read_tokens'], u['cache_write_tokens'], u['ts']])).toEqual([
      ['msg_a1', 500, 200, 100, 3000, '2025-12-20T12:00:05.000Z'],
      ['msg_a2', 1500, 80, 6000, 0, '2025-12-20T12:00:15.000Z'],
      ['#4', 40, 12, 0, 0, '2025-12-20T12:00:00.000Z'],
    ]);
    const p = codebuffImporter.parseFile('/c/manicode/projects/p/chats/x/chat-messages.json', Buffer.from(JSON.stringify([{ variant: 'ai', timestamp: '2025-12-20T12:00:05.000Z', metadata: { usage: { inputTokens: '5' } } }, 7])));
    expect(p.malformed?.map((m) => [m.problem, m.detail])).toEqual([['malformed:usage', '`metadata.usage.inputTokens` is the string "5", not a non-negative integer.'], ['not_an_object', 'The message is the number 7, not an object.']]);
  });
});

describe('codebuff fixtures', () => {
  // Its golden events: test/importers/golden-registry.test.ts.
  describe('import into embedded ClickHouse', () => {
    let sink: ClickHouseSink;
    let cleanup: () => Promise<void>;
    let first: ImportSummary;
    const tmp = makeTempDir('codebuff-import');
    beforeAll(async () => {
      ({ sink, cleanup } = await openTempSink('codebuff'));
      first = await runImport(codebuffImporter, [FIXTURES], sink);
    });
    afterAll(async () => {
      await cleanup?.();
      tmp.cleanup();
    });
    const sums = async (prefix: string): Promise<Record<string, number[]>> => {
      const rows = await sink.queryRows<Record<string, string>>(`SELECT session_id, count() AS n, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cache_read_tokens) AS cr, sum(cache_write_tokens) AS cw FROM token_usage FINAL WHERE source = 'observed' AND harness = 'codebuff' AND startsWith(origin, '${prefix}') GROUP BY session_id ORDER BY session_id`);
      return Object.fromEntries(rows.map((r) => [r['session_id'] ?? '', ['n', 'i', 'o', 'cr', 'cw'].map((k) => Number(r[k]))]));
    };

    it('stores one usage per assistant message with the sums figures.py computes', async () => {
      // python3 test/importers/fixtures-codebuff/figures.py
      expect(await sums(FIXTURES)).toEqual({ [SANDBOX]: [1, 2000, 800, 400, 0], [CALC]: [3, 2040, 292, 6100, 3000] });
      expect(first.malformedRecords).toBe(0);
    });

    it('reads nothing again unchanged; a chat rewritten whole replaces its messages and adds the new one; a damaged message is one dead letter', async () => {
      expect((await runImport(codebuffImporter, [FIXTURES], sink)).eventsEmitted).toBe(0);
      const dir = join(tmp.dir, 'manicode/projects/copy');
      cpSync(join(FIXTURES, 'manicode/projects/calc'), dir, { recursive: true });
      const file = join(dir, 'chats/2025-12-20T12-00-00.000Z/chat-messages.json');
      await runImport(codebuffImporter, [join(tmp.dir, 'manicode/projects')], sink);
      const copy = 'manicode/copy/2025-12-20T12-00-00.000Z';
      expect((await sums(tmp.dir))[copy]).toEqual([3, 2040, 292, 6100, 3000]);
      const messages = JSON.parse(readFileSync(file, 'utf8')) as Obj[];
      messages.push({ variant: 'ai', id: 'msg_a9', timestamp: '2025-12-20T12:01:00.000Z', metadata: { model: 'claude-sonnet-4-20250514', usage: { inputTokens: 7, outputTokens: 3 } } });
      messages.push({ variant: 'ai', id: 'msg_bad', timestamp: '2025-12-20T12:01:05.000Z', metadata: { usage: { outputTokens: -1 } } });
      writeFileSync(file, JSON.stringify(messages));
      const grown = await runImport(codebuffImporter, [join(tmp.dir, 'manicode/projects')], sink);
      expect(grown.malformedRecords).toBe(1);
      expect((await sums(tmp.dir))[copy]).toEqual([4, 2047, 295, 6100, 3000]);
      const dead = await sink.queryRows<{ detail: string }>({ query: 'SELECT detail FROM dead_letters FINAL WHERE startsWith(source, {s:String})', query_params: { s: `${file}:` } });
      expect(dead).toEqual([{ detail: 'malformed:usage: `metadata.usage.outputTokens` is the number -1, not a non-negative integer.' }]);
    });
  });
});

const RESEARCH = '/work/research-33/codebuff/samples';
const real = existsSync(RESEARCH) ? codebuffImporter.listFiles([RESEARCH]) : [];
if (real.length === 0) console.warn(`\n!! SKIPPING the codebuff real-sample test: no chat-messages.json in ${RESEARCH} (no real Codebuff chat is public: src/importers/codebuff/README.md).\n`);
it.skipIf(real.length === 0)('reads the real samples of the research folder without a malformed record', () => {
  for (const f of real) expect(codebuffImporter.parseFile(f, readFileSync(f)).malformed ?? []).toEqual([]);
});
