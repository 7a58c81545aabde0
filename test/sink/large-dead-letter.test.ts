// A dead letter larger than what the embedded engine takes inline (1 MiB: its body then goes
// through a file the engine reads) is stored byte for byte: a line of every byte value but the
// newline, with tabs, backslashes and invalid UTF-8, and an oversized JSON event beside it. The
// memory this path saves is measured by bench/long-line.ts.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/decode/event.ts';
import { replayPaths } from '../../src/pipeline/batch-writer.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { openTempSink } from '../helpers/db.ts';

describe('a dead letter over 1 MiB on the embedded engine', () => {
  let sink: ClickHouseSink;
  let dir: string;
  let cleanup: () => Promise<void>;
  const binary = Buffer.alloc(3 * 1024 * 1024);
  beforeAll(async () => {
    ({ sink, dir, cleanup } = await openTempSink('large-dead-letter'));
    for (let i = 0; i < binary.length; i++) binary[i] = i % 256 === 10 ? 9 : (i * 7919) % 256 === 10 ? 92 : (i * 7919) % 256;
    const big = JSON.stringify({ type: 'tool_call', ts: '2026-12-01T00:00:00Z', harness: 'claude_code', session_id: 's', call_id: 'c', tool: 'Bash', status: 'ok', input: { command: 'y'.repeat(2 * 1024 * 1024) } });
    const file = join(dir, 'large.jsonl');
    writeFileSync(file, Buffer.concat([binary, Buffer.from(`\n${big}\n`)]));
    const counts = await replayPaths([file], sink, { limits: { ...DEFAULT_LIMITS, maxEventBytes: 1024 * 1024 } });
    expect(counts.deadLetters).toBe(2);
  }, 120_000);
  afterAll(async () => cleanup());

  it('stores each line byte for byte, with its size and reason', async () => {
    const rows = await sink.queryRows<{ reason: string; raw_bytes: string; raw_hex_sha: string }>(
      'SELECT reason, raw_bytes, hex(SHA256(raw)) AS raw_hex_sha FROM dead_letters FINAL ORDER BY raw_bytes',
    );
    const { createHash } = await import('node:crypto');
    const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex').toUpperCase();
    expect(rows.map((r) => r.reason)).toEqual(['oversized', 'oversized']);
    const binaryRow = rows.find((r) => Number(r.raw_bytes) === binary.length);
    expect(binaryRow?.raw_hex_sha).toBe(sha(binary));
    const oversized = rows.find((r) => r.reason === 'oversized');
    expect(Number(oversized?.raw_bytes)).toBeGreaterThan(2 * 1024 * 1024);
  });
});
