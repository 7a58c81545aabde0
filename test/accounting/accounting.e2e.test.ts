// Accounting end to end in embedded ClickHouse: breaches, drift, replays and restarts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayPaths } from '../../src/pipeline.ts';
import { DRIFT_REPORT_SQL, USAGE_REPORT_SQL } from '../../src/report/sql.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, openTempSink } from '../helpers/db.ts';

const FIXTURE = new URL('../../fixtures/sessions/compaction.jsonl', import.meta.url).pathname;

describe('token accounting in ClickHouse', () => {
  let sink: ClickHouseSink;
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ sink, dir, cleanup } = await openTempSink('accounting'));
  });
  afterAll(async () => cleanup?.());

  it('writes one token_usage row per request and per estimate, and exactly two breaches', async () => {
    const counts = await replayPaths([FIXTURE], sink);
    expect(counts).toMatchObject({ eventsRead: 9, rowsWritten: 9, usageRows: 5, toolCallRows: 4, estimateRows: 4, breaches: 2, deadLetters: 0 });
    expect(await countOf(sink, 'SELECT count() AS n FROM token_usage FINAL')).toBe(9);
    const breaches = await sink.queryRows<{ used_tokens: string; source: string; ts: string }>(
      'SELECT used_tokens, source, ts FROM threshold_breaches FINAL ORDER BY ts',
    );
    expect(breaches).toEqual([
      { used_tokens: '85000', source: 'observed+estimated', ts: '2026-12-01 09:00:07.000' },
      { used_tokens: '85000', source: 'observed', ts: '2026-12-01 09:06:10.000' },
    ]);
  });

  it('the drift report matches the hand computation', async () => {
    const rows = await sink.queryRows<Record<string, unknown>>(DRIFT_REPORT_SQL);
    expect(rows).toEqual([
      { harness: 'grok_build', model: 'grok-4', content_class: 'cjk', intervals: '1', estimated_tokens: '50000', observed_tokens: '63500', ratio: 0.7874, error_pct: -21.26, mean_abs_error_pct: 21.26 },
      { harness: 'grok_build', model: 'grok-4', content_class: 'code', intervals: '1', estimated_tokens: '44000', observed_tokens: '45000', ratio: 0.9778, error_pct: -2.22, mean_abs_error_pct: 2.22 },
    ]);
  });

  it('replaying the same usage twice changes no total', async () => {
    const before = await sink.queryRows<Record<string, unknown>>(USAGE_REPORT_SQL);
    await replayPaths([FIXTURE], sink);
    expect(await sink.queryRows<Record<string, unknown>>(USAGE_REPORT_SQL)).toEqual(before);
    expect(before).toEqual([
      expect.objectContaining({ harness: 'grok_build', model: 'grok-4', requests: '5', input_tokens: '314000', output_tokens: '4499', estimates: '4', estimated_tool_output_tokens: '94000' }),
    ]);
    expect(await countOf(sink, 'SELECT count() AS n FROM threshold_breaches FINAL')).toBe(2);
  });

  it('a restart mid-session rebuilds the state from storage: no false breach, none missed', async () => {
    // Same session under a new id, replayed in two halves by two independent runs (two
    // accountants, as after a worker restart); the second half must continue the first.
    const lines = readFileSync(FIXTURE, 'utf8').replaceAll('sess-compaction', 'sess-restart').split('\n').filter((l) => l !== '');
    const first = join(dir, 'first.jsonl');
    const second = join(dir, 'second.jsonl');
    writeFileSync(first, `${lines.slice(0, 3).join('\n')}\n`); // 41 000, 71 000, 81 000
    writeFileSync(second, `${lines.slice(3).join('\n')}\n`); // 85 000 crosses: needs the restored 81 000
    const a = await replayPaths([first], sink);
    const b = await replayPaths([second], sink);
    expect(a.breaches + b.breaches).toBe(2);
    const breaches = await sink.queryRows<{ used_tokens: string; source: string }>(
      "SELECT used_tokens, source FROM threshold_breaches FINAL WHERE session_id = 'sess-restart' ORDER BY ts",
    );
    expect(breaches).toEqual([
      { used_tokens: '85000', source: 'observed+estimated' },
      { used_tokens: '85000', source: 'observed' },
    ]);
    // A fresh accountant that did not restore would have put the context at 4 000 here.
    const [row] = await sink.queryRows<{ context_tokens: string }>(
      "SELECT context_tokens FROM token_usage FINAL WHERE session_id = 'sess-restart' ORDER BY ts, session_seq LIMIT 1 OFFSET 3",
    );
    expect(row?.context_tokens).toBe('85000');
  });
});
