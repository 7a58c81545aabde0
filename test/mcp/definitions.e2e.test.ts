// What each MCP tool costs before it is called (issue 35): the size of its definition as the model
// receives it, the overhead it puts on every request while visible (tokens and USD, cache reads
// and writes priced as such), and the inline-or-discoverable advice, on one session whose figures
// are computed by hand below (no code of the implementation is used to compute them), and a
// second session whose server is removed and listed again. The same
// events through replay (one batch, and every event its own batch) and through Kafka give the same
// rows and the same reports. No importer reads MCP snapshots from a harness log (docs/mcp.md).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PriceTable, SHIPPED_PRICES } from '../../src/cost/prices.ts';
import { decodeEvent } from '../../src/decode/event.ts';
import type { KafkaAdmin, KafkaClient } from '../../src/kafka/client.ts';
import { definitionJson } from '../../src/mcp/definitions.ts';
import { replayPaths } from '../../src/pipeline/batch-writer.ts';
import { withDefinitionCost } from '../../src/report/definitions.ts';
import { DISCOVERY_BY_TOOL_SQL, MCP_REPORT_SQL } from '../../src/report/sql.ts';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { makeTempDir, openTempSink } from '../helpers/db.ts';
import { ensureKafka, requireKafkaOrSkip } from '../helpers/kafka.ts';
import { dumpHere, releaseKafkaTest, runCli, sendAll, startInProcessWorker, testClient, uniqueName, waitForAllCommitted, type TableDump } from '../helpers/worker.ts';

const FIXTURE = new URL('./fixtures-definitions/session.jsonl', import.meta.url).pathname;
const LINES = readFileSync(FIXTURE, 'utf8').split('\n').filter((l) => l !== '');

// ---- The hand computation -------------------------------------------------------------------
//
// docs__search_docs, as the model receives it (the snapshot's spaces gone, `caf\u00e9` written
// as `café`, `10.0` kept as listed):
const SEARCH_DOCS = '{"name":"docs__search_docs","description":"Cherche dans la doc — 検索","input_schema":{"type":"object","properties":{"query":{"type":"string","description":"café ou thé"},"limit":{"type":"integer","minimum":1,"maximum":10.0}},"required":["query"]}}';
// 246 characters, 5 of them not ASCII: — 検 索 (3 bytes each) and é é (2 bytes each), so
// 246 + 3 × 2 + 2 × 1 = 254 bytes; 254 / 4 = 63 tokens (integer division).
const SEARCH_DOCS_BYTES = 254;
const S = 63;
// docs__get_page: keys "2" before "1" as listed (a parsed object would put "1" first), the
// integer 12345678901234567890 as written (beyond 2^53); all ASCII: 216 bytes, 54 tokens.
const GET_PAGE = '{"name":"docs__get_page","description":"Fetch a page","input_schema":{"type":"object","properties":{"2":{"type":"string"},"1":{"type":"object","properties":{"id":{"type":"integer","default":12345678901234567890}}}}}}';
const GET_PAGE_BYTES = 216;
const G = 54;
// Description only: {"name":"docs__admin_reset","description":"Reset everything"} is 61 bytes
// (15 tokens); docs__viewer 51 bytes (12); docs__archive 55 (13); docs__export_pdf with
// {"type":"object"} 97 bytes (24).
const OTHERS = { docs__admin_reset: [61, 15], docs__viewer: [51, 12], docs__archive: [55, 13], docs__export_pdf: [97, 24] } as const;

// The requests of session sess-defs (grok-4; price for the test: input $3, cache read $0.30,
// cache write $3.75 per million tokens = 3 000 000 / 300 000 / 3 750 000 pico-dollars a token).
// Snapshot A at 10:00:00 shows search_docs and get_page; snapshot B at 10:05:00 disables get_page.
// The visible tools are laid end to end by name: get_page [0, 54), search_docs [54, 117)
// (after 10:05 search_docs alone: [0, 63)). Cache reads cover the front, then cache writes.
//   r0 09:59:59  before any snapshot: nothing.
//   r1 10:00:00  at snapshot A (a snapshot counts from its own instant); no cache figures:
//                get_page 54 input; search_docs 63 input.
//   r2 10:02:00  cache read 2 500 ≥ 117: get_page 54 read; search_docs 63 read.
//   r3 10:03:00  cache read 70, cache write 20: get_page 54 read; search_docs [54, 117) is read
//                to 70 (16), written to 90 (20), the rest input (27).
//   r4 10:06:00  snapshot B: search_docs only, cache write 5 000: 63 written.
// search_docs: 4 requests, 4 × 63 = 252 tokens; read 63 + 16 = 79 (r2, r3), written 20 + 63 = 83
//   (r3, r4), input 63 + 27 = 90 (r1, r3); 79 + 83 + 90 = 252.
//   79 × 300 000 + 83 × 3 750 000 + 90 × 3 000 000 = 23 700 000 + 311 250 000 + 270 000 000
//   = 604 950 000 pico-dollars = $0.00060495, $0.000605 rounded half up to micro-dollars.
// get_page: 3 requests (r1–r3), 3 × 54 = 162 tokens; read 54 + 54 = 108, input 54.
//   108 × 300 000 + 54 × 3 000 000 = 32 400 000 + 162 000 000 = 194 400 000 = $0.000194.
// server docs: 4 requests with a visible tool; 252 + 162 = 414 tokens;
//   604 950 000 + 194 400 000 = 799 350 000 pico-dollars = $0.000799. Per request now (the
//   latest snapshot's visible tools): 63.
//
// Session sess-removed, server wiki: {"name":"wiki__lookup","description":"Look up a page"} is 54
// bytes, 13 tokens. Snapshot at 11:00; q1 11:01 sees it; the server is `removed` at 11:02, so q2
// 11:03 sees nothing; a new snapshot at 11:04 lists it again, so q3 11:05 sees it: 2 requests,
// 26 tokens, no cache figures: 26 × 3 000 000 = 78 000 000 pico-dollars = $0.000078.
const PRICES = new PriceTable({ ...SHIPPED_PRICES, 'grok-4': { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15 } });

// The advice, per class (calls in the fixture):
//   search_docs: called directly once (use_tool without a search), visible in 4 requests:
//     1 call per 4 requests is not rare (fewer than 1 per 100 would be) → keep inline.
//   get_page: visible in 3 requests, never called → make discoverable.
//   export_pdf: search-only, listed by the search "export pdf", then called → discoverable works.
//   archive: search-only, refused as not in active set and the model did not search → keep inline.
//   admin_reset (disabled), viewer (app-only): never called, never searched for → remove or rename.
const EXPECTED_TOOLS: Record<string, Record<string, unknown>> = {
  docs__search_docs: { visibility: 'model_visible', definition_tokens: S, requests_while_visible: 4, definition_tokens_total: 4 * S, definition_cost_usd: 0.000605, definition_cost_flags: '', advice: 'keep inline' },
  docs__get_page: { visibility: 'disabled', definition_tokens: G, requests_while_visible: 3, definition_tokens_total: 3 * G, definition_cost_usd: 0.000194, definition_cost_flags: '', advice: 'make discoverable' },
  docs__export_pdf: { visibility: 'search_only', definition_tokens: 24, requests_while_visible: 0, definition_tokens_total: 0, definition_cost_usd: 0, advice: 'discoverable works' },
  docs__archive: { visibility: 'search_only', definition_tokens: 13, requests_while_visible: 0, definition_tokens_total: 0, definition_cost_usd: 0, advice: 'keep inline' },
  docs__admin_reset: { visibility: 'disabled', definition_tokens: 15, requests_while_visible: 0, definition_tokens_total: 0, advice: 'remove or rename' },
  docs__viewer: { visibility: 'app_only', definition_tokens: 12, requests_while_visible: 0, definition_tokens_total: 0, advice: 'remove or rename' },
  //   wiki__lookup: visible in 2 requests, never called → make discoverable.
  wiki__lookup: { visibility: 'model_visible', definition_tokens: 13, requests_while_visible: 2, definition_tokens_total: 26, definition_cost_usd: 0.000078, definition_cost_flags: '', advice: 'make discoverable' },
};
const EXPECTED_SERVERS = {
  docs: { server: 'docs', definition_tokens: S, requests_while_visible: 4, definition_tokens_total: 414, definition_cost_usd: 0.000799, definition_cost_flags: '' },
  wiki: { server: 'wiki', definition_tokens: 13, requests_while_visible: 2, definition_tokens_total: 26, definition_cost_usd: 0.000078, definition_cost_flags: '' },
};

const num = (v: unknown): unknown => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v);
const plain = (rows: readonly Record<string, unknown>[]): Record<string, unknown>[] => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, num(v)])));

async function reports(sink: ClickHouseSink): Promise<{ tools: Record<string, unknown>[]; servers: Record<string, unknown>[] }> {
  return {
    tools: plain(await withDefinitionCost(sink, await sink.queryDisplayRows(DISCOVERY_BY_TOOL_SQL), 'tool', PRICES)),
    servers: plain(await withDefinitionCost(sink, await sink.queryDisplayRows(MCP_REPORT_SQL), 'server', PRICES)),
  };
}

describe('the definition of a tool as the model receives it', () => {
  it('is the compact JSON of name, description and input_schema, keys and numbers as listed, non-ASCII unescaped', () => {
    expect(Buffer.byteLength(SEARCH_DOCS, 'utf8')).toBe(SEARCH_DOCS_BYTES);
    expect(Buffer.byteLength(GET_PAGE, 'utf8')).toBe(GET_PAGE_BYTES);
    const schemaText = ' { "type": "object", "properties": { "query": {"type":"string","description":"caf\\u00e9 ou thé"}, "limit": {"type":"integer","minimum":1,"maximum":10.0} }, "required": ["query"] }';
    expect(definitionJson('docs__search_docs', 'Cherche dans la doc — 検索', schemaText)).toBe(SEARCH_DOCS);
  });

  it('is measured per snapshot and tool when decoded: bytes and bytes / 4 tokens, none for a tool listed by name only', () => {
    const outcome = decodeEvent(Buffer.from(LINES[0] as string), 'x', '2026-12-14 00:00:00.000');
    expect(outcome.kind).toBe('mcp');
    const sizes = Object.fromEntries((outcome.kind === 'mcp' ? outcome.registrations : []).map((r) => [r.qualified_name, [r.definition_bytes, r.definition_tokens]]));
    expect(sizes).toEqual({ docs__search_docs: [SEARCH_DOCS_BYTES, S], docs__get_page: [GET_PAGE_BYTES, G], ...OTHERS });
    const bare = decodeEvent(Buffer.from(LINES[0]!.replace(/"tools":\[.*\]\}$/, '"tools":[{"name":"get_page","model_visible":true,"disabled":false}]}')), 'x', '2026-12-14 00:00:00.000');
    expect(bare.kind === 'mcp' ? bare.registrations.map((r) => [r.definition_bytes, r.definition_tokens]) : bare).toEqual([[null, null]]);
  });
});

/** The replay's reports and rows, which the Kafka path must give. */
let replayed: { tools: Record<string, unknown>[]; servers: Record<string, unknown>[] };
let replayedDump: TableDump;

describe('what tools cost before they are called, in embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ sink, dir, cleanup } = await openTempSink('definitions'));
    await replayPaths([FIXTURE], sink);
    replayed = await reports(sink);
    replayedDump = await dumpHere(sink);
  }, 120_000);
  afterAll(async () => cleanup?.());

  it('stores each snapshot\'s definition sizes (the disabled tool\'s too: it is never counted)', async () => {
    const rows = await sink.queryRows<{ qualified_name: string; visibility: string; definition_tokens: string | null }>(
      "SELECT qualified_name, visibility, definition_tokens FROM mcp_tool_registrations FINAL WHERE qualified_name IN ('docs__get_page', 'docs__search_docs') ORDER BY ts, qualified_name",
    );
    expect(plain(rows)).toEqual([
      { qualified_name: 'docs__get_page', visibility: 'model_visible', definition_tokens: G },
      { qualified_name: 'docs__search_docs', visibility: 'model_visible', definition_tokens: S },
      { qualified_name: 'docs__get_page', visibility: 'disabled', definition_tokens: G },
      { qualified_name: 'docs__search_docs', visibility: 'model_visible', definition_tokens: S },
    ]);
  });

  it('report discovery --by tool: definition tokens, requests while visible, the total, its cost and the advice, per tool as computed by hand', () => {
    const byTool = Object.fromEntries(replayed.tools.map((r) => [r['tool'], r]));
    expect(Object.keys(byTool).sort()).toEqual(Object.keys(EXPECTED_TOOLS).sort());
    for (const [tool, want] of Object.entries(EXPECTED_TOOLS)) expect(byTool[tool], tool).toMatchObject(want);
    // The cost sits right after the tokens it prices; the advice ends the row.
    const columns = Object.keys(replayed.tools[0] ?? {});
    expect(columns.slice(columns.indexOf('definition_tokens'))).toEqual(['definition_tokens', 'requests_while_visible', 'definition_tokens_total', 'definition_cost_usd', 'definition_cost_flags', 'advice']);
  });

  it('report mcp: each server\'s definition tokens per request now, and its overhead over the session (none while removed)', () => {
    const byServer = Object.fromEntries(replayed.servers.map((r) => [r['server'], r]));
    expect(Object.keys(byServer).sort()).toEqual(['docs', 'wiki']);
    for (const [server, want] of Object.entries(EXPECTED_SERVERS)) expect(byServer[server], server).toMatchObject(want);
  });

  it('a model without a price gives no cost, flagged, never zero', async () => {
    const rows = await withDefinitionCost(sink, await sink.queryDisplayRows(MCP_REPORT_SQL), 'server', new PriceTable());
    expect(rows.find((r) => r['server'] === 'docs')).toMatchObject({ definition_tokens_total: 414, definition_cost_usd: null, definition_cost_flags: 'unknown_price:grok-4=4' });
  });

  it('the command line prints the same rows (report discovery --by tool, report mcp, with --prices)', async () => {
    const prices = join(dir, 'prices.json');
    writeFileSync(prices, JSON.stringify({ 'grok-4': { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15 } }));
    const db = join(dir, 'cli-db');
    const replay = await runCli(['replay', FIXTURE, '--db', db]);
    expect(replay.code, replay.stderr).toBe(0);
    const json = async (args: string[]): Promise<Record<string, unknown>[]> => {
      const r = await runCli([...args, '--db', db, '--format', 'json', '--prices', prices]);
      expect(r.code, r.stderr).toBe(0);
      return plain(r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>));
    };
    expect(await json(['report', 'discovery', '--by', 'tool'])).toEqual(replayed.tools);
    expect(await json(['report', 'mcp'])).toEqual(replayed.servers);
  }, 120_000);

  it('every event its own batch, and the events in reverse order, give the same rows and reports', async () => {
    for (const t of ['mcp_events', 'mcp_server_state', 'mcp_tool_registrations', 'discovery_events', 'tool_calls', 'token_usage', 'threshold_breaches']) {
      await sink.client.command({ query: `TRUNCATE TABLE ${t}` });
    }
    const reversed = join(dir, 'reversed.jsonl');
    writeFileSync(reversed, `${[...LINES].reverse().join('\n')}\n`);
    await replayPaths([reversed], sink, { batch: { batchMaxRows: 1, batchMaxBytes: 1 << 30 } });
    expect(await reports(sink)).toEqual(replayed);
  }, 120_000);
});

// After the replay's sink is closed: one embedded data directory per process.
describe('what tools cost before they are called, through Kafka', () => {
  let brokers: string[] | null = null;
  let consumed: { tools: Record<string, unknown>[]; servers: Record<string, unknown>[] } | undefined;
  let consumedDump: TableDump | undefined;
  const topic = uniqueName('tc-definitions');
  const tmp = makeTempDir('definitions-kafka');
  let client: KafkaClient | undefined;
  let admin: KafkaAdmin | undefined;
  let kafkaSink: ClickHouseSink | undefined;

  beforeAll(async () => {
    brokers = requireKafkaOrSkip(await ensureKafka(), 'test/mcp/definitions.e2e.test.ts');
    if (brokers === null) return;
    client = testClient(brokers, 'definitions-test');
    admin = await client.admin();
    await admin.ensureTopic(topic, { partitions: 1 });
    await sendAll(client, topic, LINES.map((l) => ({ key: 'sess-defs', value: Buffer.from(l) })));
    kafkaSink = await ClickHouseSink.open({ db: join(tmp.dir, 'db') });
    const group = uniqueName('g-definitions');
    const { worker } = await startInProcessWorker(brokers, topic, group, kafkaSink);
    await waitForAllCommitted(admin, group, topic);
    await worker.stop('test done');
    consumed = await reports(kafkaSink);
    consumedDump = await dumpHere(kafkaSink);
  }, 240_000);
  afterAll(() => releaseKafkaTest({ sink: kafkaSink, admin, topic, tmp }));

  it('consume gives the rows and the reports replay gives', (ctx) => {
    if (brokers === null) ctx.skip();
    expect(consumed).toEqual(replayed);
    expect(consumedDump?.get('mcp_tool_registrations')).toEqual(replayedDump.get('mcp_tool_registrations'));
    expect(consumedDump?.get('token_usage')?.length).toBe(replayedDump.get('token_usage')?.length);
  });
});
