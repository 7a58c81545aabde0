// Accounting end to end in embedded ClickHouse: breaches, drift, replays and restarts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayPaths, type PipelineCounts } from '../../src/pipeline/batch-writer.ts';
import { DRIFT_REPORT_SQL, USAGE_REPORT_SQL } from '../../src/report/sql.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { countOf, openTempSink } from '../helpers/db.ts';

const FIXTURE = new URL('../../fixtures/sessions/compaction.jsonl', import.meta.url).pathname;

describe('token accounting in ClickHouse', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  // Everything is written here, in the order the checks need, and what each check reads is
  // taken when it is true: no test depends on another having run (vitest --sequence.shuffle.tests).
  let counts: PipelineCounts;
  let firstBreaches: { used_tokens: string; source: string; ts: string }[];
  let firstTokenUsageRows: number;
  let drift: Record<string, unknown>[];
  let usageOnce: Record<string, unknown>[];
  let usageTwice: Record<string, unknown>[];
  let breachesAfterTwice: number;
  let restart: { a: PipelineCounts; b: PipelineCounts; breaches: { used_tokens: string; source: string }[]; fourthContext: string | undefined };

  beforeAll(async () => {
    let dir: string;
    ({ sink, dir, cleanup } = await openTempSink('accounting'));
    counts = await replayPaths([FIXTURE], sink);
    firstTokenUsageRows = await countOf(sink, 'SELECT count() AS n FROM token_usage FINAL');
    firstBreaches = await sink.queryRows('SELECT used_tokens, source, ts FROM threshold_breaches FINAL ORDER BY ts');
    drift = await sink.queryRows(DRIFT_REPORT_SQL);
    usageOnce = await sink.queryRows(USAGE_REPORT_SQL);
    await replayPaths([FIXTURE], sink);
    usageTwice = await sink.queryRows(USAGE_REPORT_SQL);
    breachesAfterTwice = await countOf(sink, 'SELECT count() AS n FROM threshold_breaches FINAL');

    // Same session under a new id, replayed in two halves by two independent runs (two
    // accountants, as after a worker restart); the second half must continue the first.
    const lines = readFileSync(FIXTURE, 'utf8').replaceAll('sess-compaction', 'sess-restart').split('\n').filter((l) => l !== '');
    const firstHalf = join(dir, 'first.jsonl');
    const secondHalf = join(dir, 'second.jsonl');
    writeFileSync(firstHalf, `${lines.slice(0, 3).join('\n')}\n`); // 41 000, 71 000, 81 000
    writeFileSync(secondHalf, `${lines.slice(3).join('\n')}\n`); // 85 000 crosses: needs the restored 81 000
    const a = await replayPaths([firstHalf], sink);
    const b = await replayPaths([secondHalf], sink);
    const breaches = await sink.queryRows<{ used_tokens: string; source: string }>(
      "SELECT used_tokens, source FROM threshold_breaches FINAL WHERE session_id = 'sess-restart' ORDER BY ts",
    );
    const [row] = await sink.queryRows<{ context_tokens: string }>(
      "SELECT context_tokens FROM token_usage FINAL WHERE session_id = 'sess-restart' ORDER BY ts, session_seq LIMIT 1 OFFSET 3",
    );
    restart = { a, b, breaches, fourthContext: row?.context_tokens };
  });
  afterAll(async () => cleanup?.());

  it('writes one token_usage row per request and per estimate, and exactly two breaches', () => {
    expect(counts).toMatchObject({ eventsRead: 9, rowsWritten: 9, usageRows: 5, toolCallRows: 4, estimateRows: 4, breaches: 2, deadLetters: 0 });
    expect(firstTokenUsageRows).toBe(9);
    expect(firstBreaches).toEqual([
      { used_tokens: '85000', source: 'observed+estimated', ts: '2026-12-01 09:00:07.000' },
      { used_tokens: '85000', source: 'observed', ts: '2026-12-01 09:06:10.000' },
    ]);
  });

  it('the drift report matches the hand computation', () => {
    expect(drift).toEqual([
      { harness: 'grok_build', model: 'grok-4', content_class: 'cjk', intervals: '1', estimated_tokens: '50000', observed_tokens: '63500', ratio: 0.7874, error_pct: -21.26, mean_abs_error_pct: 21.26 },
      { harness: 'grok_build', model: 'grok-4', content_class: 'code', intervals: '1', estimated_tokens: '44000', observed_tokens: '45000', ratio: 0.9778, error_pct: -2.22, mean_abs_error_pct: 2.22 },
    ]);
  });

  it('replaying the same usage twice changes no total', () => {
    expect(usageTwice).toEqual(usageOnce);
    expect(usageOnce).toEqual([
      expect.objectContaining({ harness: 'grok_build', model: 'grok-4', requests: '5', input_tokens: '314000', output_tokens: '4499', estimates: '4', estimated_tool_output_tokens: '94000' }),
    ]);
    expect(breachesAfterTwice).toBe(2);
  });

  it('a restart mid-session rebuilds the state from storage: no false breach, none missed', () => {
    expect(restart.a.breaches + restart.b.breaches).toBe(2);
    expect(restart.breaches).toEqual([
      { used_tokens: '85000', source: 'observed+estimated' },
      { used_tokens: '85000', source: 'observed' },
    ]);
    // A fresh accountant that did not restore would have put the context at 4 000 here.
    expect(restart.fourthContext).toBe('85000');
  });
});
