// What the fuzz suite found, each as the smallest input that showed it (fixed; these keep it so).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { U64_MAX } from '../../src/accounting/arithmetic.ts';
import { normaliseContextTokens } from '../../src/accounting/conventions.ts';
import { ContextAccountant } from '../../src/accounting/session.ts';
import { decodeEvent, DEFAULT_LIMITS } from '../../src/decode/event.ts';
import { normaliseTimestamp } from '../../src/importers/envelope.ts';
import { loadImporter } from '../../src/importers/registry.ts';
import { replayPaths } from '../../src/pipeline/batch-writer.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { escapeTsv } from '../../src/sink/tsv.ts';
import { countOf, openTempSink } from '../helpers/db.ts';

const AT = '2026-12-10 12:00:00.000';
const decode = (line: string, limits = DEFAULT_LIMITS) => decodeEvent(Buffer.from(line, 'utf8'), 'x.jsonl:1', AT, limits);
const reasonOf = (line: string, limits = DEFAULT_LIMITS): string => {
  const o = decode(line, limits);
  return o.kind === 'dead' ? `dead:${o.dead.reason}` : o.kind;
};
const CALL = '{"schema":"toolcanon.event/v1","type":"tool_call","ts":"2026-12-02T10:00:00.123Z","harness":"claude_code","session_id":"s-1","call_id":"c-1","tool":"Read","status":"ok","input":{}';
const STATUS = '{"schema":"toolcanon.event/v1","type":"mcp_status","ts":"2026-12-02T10:00:00Z","harness":"mcp","session_id":"s","server":"a","client_id":"c","transport":"stdio","state":"restarting"';
const USAGE = '{"schema":"toolcanon.event/v1","type":"usage","ts":"2026-12-02T10:00:00Z","harness":"claude_code","session_id":"s","request_id":"r-1"';
const deep = (n: number): string => `${'{"x":'.repeat(n)}1${'}'.repeat(n)}`;

describe('decoder', () => {
  it('a key with a bad escape is invalid_json, not a throw (the span scanner decoded keys with JSON.parse before the line was checked)', () => {
    for (const line of ['{"a\\q":1}', '{"\\u12":1}', '{"\\', '{"type":"usage","\\x":1}']) expect(reasonOf(line), line).toBe('dead:invalid_json');
  });

  it('with --max-depth raised to a million, a 100 000-deep value is decoded, not a stack overflow (content id, error detail)', () => {
    const limits = { ...DEFAULT_LIMITS, maxDepth: 1_000_000 };
    expect(reasonOf(`${CALL.replace('"call_id":"c-1"', '"call_id":""').replace('"input":{}', `"input":${deep(100_000)}`)}}`, limits)).toBe('row');
    expect(reasonOf(`{"schema":"toolcanon.event/v1","type":${deep(100_000)}}`, limits)).toBe('dead:schema');
  });

  it('numbers the tables cannot hold are dead letters schema: duration_ms and backoff_ms beyond 2^53 - 1, attempt beyond 2^32 - 1', () => {
    expect(reasonOf(`${CALL},"duration_ms":9007199254740991}`)).toBe('row');
    for (const v of ['9007199254740992', '1e21', '18446744073709551616']) expect(reasonOf(`${CALL},"duration_ms":${v}}`), v).toBe('dead:schema');
    expect(reasonOf(`${STATUS},"attempt":4294967295,"backoff_ms":9007199254740991}`)).toBe('mcp');
    expect(reasonOf(`${STATUS},"attempt":4294967296}`)).toBe('dead:schema');
    expect(reasonOf(`${STATUS},"backoff_ms":1e300}`)).toBe('dead:schema');
    const o = decode(`${CALL},"duration_ms":1e21}`);
    expect(o.kind === 'dead' && o.dead.detail).toBe('/duration_ms: must be <= 9007199254740991 (got 1e+21)');
  });
});

describe('accounting', () => {
  it('usage figures that add up beyond 2^64 - 1 saturate the context instead of throwing RangeError', () => {
    const f = { inputTokens: U64_MAX, outputTokens: U64_MAX, cacheReadTokens: U64_MAX, cacheWriteTokens: 1n, reasoningTokens: U64_MAX };
    expect(normaliseContextTokens('claude_code', f)).toEqual({ inputTotal: U64_MAX, contextTokens: U64_MAX });
    expect(normaliseContextTokens('opencode', f)).toEqual({ inputTotal: U64_MAX, contextTokens: U64_MAX });
    const o = decode(`${USAGE},"input_tokens":18446744073709551615,"output_tokens":1,"cache_read_tokens":18446744073709551615,"context_window_tokens":1000}`);
    if (o.kind !== 'usage') throw new Error(o.kind);
    const a = new ContextAccountant();
    expect(a.onUsage(o.usage, AT).usage?.context_tokens).toBe(U64_MAX.toString());
    // A tool output on top of a saturated context stays saturated.
    const call = decode(`${CALL.replace('"session_id":"s-1"', '"session_id":"s"')},"output":"${'x'.repeat(400)}"}`);
    if (call.kind !== 'row') throw new Error(call.kind);
    expect(a.onToolOutput(call.row, call.outputClass, AT).usage?.context_tokens).toBe(U64_MAX.toString());
  });
});

describe('importers', () => {
  it('a timestamp Date.parse rolls over (2026-02-30) is no timestamp: the importer falls back instead of writing an event the decoder refuses', async () => {
    expect(normaliseTimestamp('2026-02-30T10:00:00Z')).toBeUndefined();
    expect(normaliseTimestamp('2028-02-29T10:00:00Z')).toBe('2028-02-29T10:00:00Z');
    const codex = await loadImporter('codex');
    const line = '{"timestamp":"2026-02-30T10:00:00Z","type":"event_msg","payload":{"type":"token_count","info":{"model":"gpt-5.2-codex","last_token_usage":{"input_tokens":1000,"cached_input_tokens":250,"output_tokens":125,"reasoning_output_tokens":75,"total_tokens":1200},"total_token_usage":{"input_tokens":1000,"cached_input_tokens":250,"output_tokens":125,"reasoning_output_tokens":75,"total_tokens":1200}}}}';
    const parsed = codex.parseFile('/x/rollout-2025-10-10T01-09-47-0199cee2-0000-7000-8000-00000000c0de.jsonl', Buffer.from(`${line}\n`));
    for (const e of parsed.events) expect(decodeEvent(Buffer.from(e.envelope.text), e.source, AT).kind).not.toBe('dead');
    expect(parsed.events.length + (parsed.malformed?.length ?? 0) + Object.values(parsed.skipped).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });
});

describe('sink', () => {
  it('TSV text carries no SQL comment starter (the embedded engine read test hints such as -- {serverError:1} or { echo } in the comments of inserted data)', () => {
    for (const t of ['-- {serverError:1}', '---', 'a /* { echo } */', '# {clientError:1}', '#!/bin/sh', '#x', '-x-', 'https://a.b', '///', '/*/']) {
      const e = escapeTsv(t);
      expect(e, t).not.toMatch(/--|\/\/|\/\*|#[ !]/);
    }
    expect(escapeTsv('curl https://a.b')).toBe('curl https:/\\x2Fa.b');
    expect(escapeTsv('ls --all -- x')).toBe('ls -\\x2Dall -\\x2D x');
    expect(escapeTsv('#x - /')).toBe('#x - /');
  });
});

describe('end to end into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ sink, dir, cleanup } = await openTempSink('fuzz-regressions'));
  });
  afterAll(async () => cleanup?.());

  it('a batch over more than 100 months inserts (was: TOO_MANY_PARTS, the whole batch lost and the replay aborted)', async () => {
    const file = join(dir, 'months.jsonl');
    const lines = Array.from({ length: 150 }, (_, i) => {
      const ts = new Date(Date.UTC(2000, i, 1)).toISOString();
      return `${CALL.replace('"c-1"', `"m-${i}"`).replace('2026-12-02T10:00:00.123Z', ts)}}`;
    });
    writeFileSync(file, `${lines.join('\n')}\n`);
    const counts = await replayPaths([file], sink);
    expect(counts.toolCallRows).toBe(150);
    expect(await countOf(sink, "SELECT count() AS n FROM tool_calls FINAL WHERE startsWith(call_id, 'm-')")).toBe(150);
  });

  it('text holding test hints (-- {serverError:1}, a URL then f() { echo hi; }, /* { echo } */, # {clientError:1}) is stored as sent (was: the whole insert failed, or the engine printed it, data included, on stdout)', async () => {
    const file = join(dir, 'hints.jsonl');
    const texts = ['-- {serverError:1}', "`x` '); -- {serverError:1}", 'a /* { echo } */ b', '# {clientError:1}', '#! { echo }', 'psql -c "SELECT 1" -- { serverError 60 }', '// {serverError:1}', 'curl https://example.com && f() { echo hi; }'];
    writeFileSync(file, texts.map((t, i) => `${CALL.replace('"c-1"', `"h-${i}"`).replace('"tool":"Read"', '"tool":"Bash"').replace('"input":{}', `"input":${JSON.stringify({ command: t })}`)},"output":${JSON.stringify(t)},"error":${JSON.stringify(t)}}`).join('\n') + '\n');
    const counts = await replayPaths([file], sink, { limits: { ...DEFAULT_LIMITS, redact: false } });
    expect(counts.toolCallRows).toBe(texts.length);
    const rows = await sink.queryRows<{ call_id: string; command: string; error: string }>("SELECT call_id, command, error FROM tool_calls FINAL WHERE startsWith(call_id, 'h-') ORDER BY call_id");
    expect(rows).toEqual(texts.map((t, i) => ({ call_id: `h-${i}`, command: t, error: t })));
  });

  it('a duration of 1e21 and usage figures adding up beyond u64 are a dead letter and a saturated row (was: insert failure, RangeError)', async () => {
    const file = join(dir, 'numbers.jsonl');
    writeFileSync(file, [`${CALL.replace('"c-1"', '"n-1"')},"duration_ms":1e21}`, `${USAGE},"input_tokens":18446744073709551615,"output_tokens":18446744073709551615}`, `${STATUS},"backoff_ms":1e300}`].join('\n') + '\n');
    const counts = await replayPaths([file], sink);
    expect(counts.eventsRead).toBe(3);
    expect(counts.deadLetters).toBe(2);
    expect(counts.usageRows).toBe(1);
    const [row] = await sink.queryRows<{ c: string }>("SELECT toString(context_tokens) AS c FROM token_usage FINAL WHERE request_id = 'r-1'");
    expect(row?.c).toBe(U64_MAX.toString());
  });
});
