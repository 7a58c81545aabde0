// End to end: a few thousand fuzzed lines (fixture events of every type, mutated ones, generated
// ones, random bytes) replayed through the real pipeline (redaction on, the default) into
// embedded ClickHouse. Events in = tool_calls + usage + mcp_events rows + dead letters, read back
// with FINAL; what each line became, its stored bytes and its raw input are what the decoder
// alone says of it (the oracle: decodeEvent, line by line, with the same source).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageFingerprint } from '../../src/accounting/session.ts';
import { decodeEvent, DEFAULT_LIMITS, type DecodeOutcome } from '../../src/decode/event.ts';
import { replayPaths, type PipelineCounts } from '../../src/pipeline/batch-writer.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, openTempSink } from '../helpers/db.ts';
import { generatedLine } from './events.ts';
import { FUZZ_RUNS, FUZZ_SEED, log, seedOf } from './harness.ts';
import { envelopeSeeds, mutatedLine, randomLine } from './lines.ts';

/** Lines in the sample: a 30th of the suite's case budget (4 000 by default), at least 500. */
const LINES = Math.max(500, Math.round(FUZZ_RUNS / 30));

/** A valid seed with an event id of its own, so copies of one seed stay distinct rows. */
function withId(seed: Buffer, id: string): Uint8Array {
  const o = JSON.parse(seed.toString('utf8')) as Record<string, unknown>;
  return Buffer.from(JSON.stringify({ ...o, event_id: id }), 'utf8');
}

/** A line of the file: LF would split it (it is replaced by a space); a blank line is no event. */
function asLine(bytes: Uint8Array): Buffer {
  const b = Buffer.from(bytes);
  for (let i = 0; i < b.length; i++) if (b[i] === 0x0a) b[i] = 0x20;
  return b;
}
const isBlank = (b: Uint8Array): boolean => b.every((c) => c === 0x20 || c === 0x09 || c === 0x0d);

/** A JS string as ClickHouse gives it back: UTF-8 (a lone surrogate is written as U+FFFD). */
const asStored = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');

const TABLES = ['tool_calls', 'token_usage', 'mcp_events', 'dead_letters'] as const;
type Table = (typeof TABLES)[number];

/**
 * The identity of a stored row: its table's sorting key. (FINAL deduplicates across the monthly
 * partitions too: the same id at another month is the same row.)
 */
const key = (...parts: string[]): string => parts.map(asStored).join('\u0001');

/** Where ClickHouse keeps what a line became. */
function keyOf(o: DecodeOutcome): { table: Table; key: string } {
  switch (o.kind) {
    case 'row':
      return { table: 'tool_calls', key: key(o.row.harness, o.row.session_id, o.row.event_id) };
    case 'usage':
      return { table: 'token_usage', key: key(o.usage.session_id, o.usage.event_id) };
    case 'mcp':
      return { table: 'mcp_events', key: key(o.event.session_id, o.event.agent_id, o.event.server, o.event.event_id) };
    case 'dead':
      return { table: 'dead_letters', key: o.dead.dead_letter_id };
  }
}

/**
 * Where each line's row lands, in arrival order; undefined for a usage the accounting skips as
 * applied already (the same id in its session and agent, with the same figures: stored once).
 */
function placements(oracle: readonly DecodeOutcome[]): ({ table: Table; key: string } | undefined)[] {
  const applied = new Map<string, string>();
  return oracle.map((o) => {
    if (o.kind === 'usage') {
      const id = key(o.usage.session_id, o.usage.agent_id, o.usage.event_id);
      const figures = usageFingerprint(o.usage);
      if (applied.get(id) === figures) return undefined;
      applied.set(id, figures);
    }
    return keyOf(o);
  });
}

describe('fuzz: end to end into embedded ClickHouse', () => {
  let sink: ClickHouseSink;
  let dir: string;
  let cleanup: () => Promise<void>;
  let file: string;
  let lines: Buffer[];
  let counts: PipelineCounts;
  const oracle: DecodeOutcome[] = [];

  beforeAll(async () => {
    ({ sink, dir, cleanup } = await openTempSink('fuzz-e2e'));
    const seeds = envelopeSeeds();
    const valid = seeds.valid;
    const all = [...valid, ...seeds.bad];
    const arb = fc.oneof(
      { arbitrary: fc.tuple(fc.constantFrom(...valid), fc.nat()).map(([s, n]) => withId(s, `fz-${n}`)), weight: 3 },
      { arbitrary: mutatedLine(all), weight: 4 },
      { arbitrary: generatedLine.map((g) => g.bytes), weight: 3 },
      { arbitrary: randomLine, weight: 1 },
    );
    const seed = seedOf('e2e: replay');
    lines = fc
      .sample(arb, { numRuns: LINES * 2, seed })
      .map(asLine)
      .filter((b) => !isBlank(b))
      .slice(0, LINES);
    file = join(dir, 'fuzz.jsonl');
    writeFileSync(file, Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
    const t0 = performance.now();
    counts = await replayPaths([file], sink);
    log(`e2e: replay: seed ${FUZZ_SEED} (sample seed ${seed}), ${lines.length} lines (${(Buffer.concat(lines).byteLength / 1024).toFixed(0)} KiB) replayed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    // The oracle: the decoder alone, line by line, with the source the replay gives each line.
    lines.forEach((l, i) => oracle.push(decodeEvent(l, `${file}:${i + 1}`, '2026-01-01 00:00:00.000', DEFAULT_LIMITS)));
  });
  afterAll(async () => cleanup?.());

  it('events in = tool_calls + usage + mcp_events rows + dead letters (FINAL), by kind and by reason', async () => {
    expect(counts.eventsRead).toBe(lines.length);
    expect(counts.rowsWritten + counts.deadLetters).toBe(lines.length);
    const byKind = (k: DecodeOutcome['kind']): number => oracle.filter((o) => o.kind === k).length;
    expect({ toolCalls: counts.toolCallRows, usage: counts.usageRows, mcp: counts.mcpEventRows, dead: counts.deadLetters }).toEqual({ toolCalls: byKind('row'), usage: byKind('usage'), mcp: byKind('mcp'), dead: byKind('dead') });
    const reasons: Record<string, number> = {};
    for (const o of oracle) if (o.kind === 'dead') reasons[o.dead.reason] = (reasons[o.dead.reason] ?? 0) + 1;
    expect(counts.deadLettersByReason).toEqual(reasons);

    // Read back: distinct rows per table (an event sent twice with one id is one row, a usage
    // applied already is not written again: the oracle says how many lines were such repeats).
    const keys = { tool_calls: new Set<string>(), token_usage: new Set<string>(), mcp_events: new Set<string>(), dead_letters: new Set<string>() };
    for (const p of placements(oracle)) if (p) keys[p.table].add(p.key);
    const stored = {
      tool_calls: await countOf(sink, 'SELECT count() AS n FROM tool_calls FINAL'),
      token_usage: await countOf(sink, "SELECT count() AS n FROM token_usage FINAL WHERE source = 'observed'"),
      mcp_events: await countOf(sink, 'SELECT count() AS n FROM mcp_events FINAL'),
      dead_letters: await countOf(sink, 'SELECT count() AS n FROM dead_letters FINAL'),
    };
    expect(stored).toEqual({ tool_calls: keys.tool_calls.size, token_usage: keys.token_usage.size, mcp_events: keys.mcp_events.size, dead_letters: keys.dead_letters.size });
    const repeats = lines.length - Object.values(keys).reduce((n, s) => n + s.size, 0);
    expect(stored.tool_calls + stored.token_usage + stored.mcp_events + stored.dead_letters + repeats).toBe(lines.length);
    expect(stored.dead_letters).toBe(counts.deadLetters); // one source per line: no dead letter repeats
    log(`e2e: replay: ${lines.length} events in = ${stored.tool_calls} tool_calls + ${stored.token_usage} usage + ${stored.mcp_events} mcp_events + ${stored.dead_letters} dead letters + ${repeats} repeated ids; reasons ${JSON.stringify(reasons)}`);
    // The sample reaches every table, and the rows are not a handful.
    for (const n of Object.values(stored)) expect(n).toBeGreaterThan(LINES / 50);
  });

  it('stores each dead letter\'s bytes, each raw input and each MCP event exactly as the decoder made them', async () => {
    const dead = new Map(
      (await sink.queryRows<{ id: string; raw: string; reason: string; source: string }>('SELECT dead_letter_id AS id, base64Encode(raw) AS raw, reason, source FROM dead_letters FINAL')).map((r) => [r.id, r]),
    );
    const calls = new Map(
      (await sink.queryRows<{ harness: string; session_id: string; event_id: string; raw_input: string; call_id: string; redactions: number }>(`SELECT harness, session_id, event_id, raw_input, call_id, redactions FROM tool_calls FINAL`)).map((r) => [
        key(r.harness, r.session_id, r.event_id),
        r,
      ]),
    );
    const mcp = new Map(
      (await sink.queryRows<{ session_id: string; agent_id: string; server: string; event_id: string; raw: string }>(`SELECT session_id, agent_id, server, event_id, raw FROM mcp_events FINAL`)).map((r) => [
        key(r.session_id, r.agent_id, r.server, r.event_id),
        r,
      ]),
    );
    const usage = new Map(
      (
        await sink.queryRows<{ session_id: string; event_id: string; input_tokens: string; output_tokens: string }>(
          `SELECT session_id, event_id, toString(input_tokens) AS input_tokens, toString(output_tokens) AS output_tokens FROM token_usage FINAL WHERE source = 'observed'`,
        )
      ).map((r) => [key(r.session_id, r.event_id), r]),
    );
    // Rows whose key is unique in the sample (a repeated id keeps one of its copies).
    const placed = placements(oracle);
    const seen = new Map<string, number>();
    for (const p of placed) if (p) seen.set(p.key, (seen.get(p.key) ?? 0) + 1);
    let checked = 0;
    oracle.forEach((o, i) => {
      const k = placed[i];
      if (k === undefined || seen.get(k.key) !== 1) return;
      const where = `line ${i + 1}: ${lines[i]?.toString('utf8').slice(0, 200)}`;
      if (o.kind === 'dead') {
        expect(dead.get(k.key), where).toMatchObject({ raw: Buffer.from(o.dead.raw).toString('base64'), reason: o.dead.reason, source: `${file}:${i + 1}` });
      } else if (o.kind === 'row') {
        expect(calls.get(k.key), where).toMatchObject({ raw_input: asStored(o.row.raw_input), call_id: asStored(o.row.call_id), redactions: o.row.redactions });
      } else if (o.kind === 'mcp') {
        expect(mcp.get(k.key)?.raw, where).toBe(asStored(o.event.raw));
      } else {
        expect(usage.get(k.key), where).toMatchObject({ input_tokens: o.usage.input_tokens.toString(), output_tokens: o.usage.output_tokens.toString() });
      }
      checked++;
    });
    expect(checked).toBeGreaterThan(lines.length / 2);
  });
});
