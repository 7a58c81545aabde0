// What rebuilding one session context costs the accounting (Sink.latestUsage, run for a context a
// process does not hold: at its start, and after an eviction) against the context's stored
// history: K token_usage rows of one session, K = 1 k, 100 k, 1 M (each its own session in one
// fresh embedded database), the lookup timed five times each, the mean printed with the ratio to
// K = 1 k. Issue 31 asks a derivation's batch cost to be flat in K; this read is not yet: it
// reads the context's rows in order for the highest one (once it grouped them all by event, 13x
// slower at 1 M).
// Usage: npx tsx bench/restore.ts [K…]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClickHouseSink } from '../src/sink/clickhouse.ts';

const SIZES = process.argv.slice(2).map(Number);
const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-bench-restore-'));
try {
  const sink = await ClickHouseSink.open({ db: join(tmp, 'db') });
  let first: number | undefined;
  for (const k of SIZES.length > 0 ? SIZES : [1_000, 100_000, 1_000_000]) {
    await sink.client.command({ query: `INSERT INTO token_usage (event_id, ts, harness, session_id, turn_id, model, source, request_id, content_class, content_bytes,
        context_tokens, context_source, usage_pct, above_threshold, threshold_pct, headroom_tokens, estimated_since_observed, session_seq, origin, ingested_at)
      SELECT concat('e', toString(number)), toDateTime64('2026-12-01 00:00:00', 3) + number, 'codex', 'S${k}', '', 'gpt-5', 'estimated', '', 'text', 10,
        number, 'estimated', 0, false, 80, 0, 0, number, 'bench', now64(3) FROM numbers(${k})` });
    const [state] = await sink.latestUsage([{ sessionId: `S${k}`, agentId: '' }]);
    if (state?.session_seq !== String(k - 1)) throw new Error(`K = ${k}: restored seq ${state?.session_seq}, expected ${k - 1}`);
    const t = performance.now();
    for (let i = 0; i < 5; i++) await sink.latestUsage([{ sessionId: `S${k}`, agentId: '' }]);
    const ms = (performance.now() - t) / 5;
    first ??= ms;
    console.log(`K = ${String(k).padStart(9)}: ${ms.toFixed(1).padStart(8)} ms a restore  (${(ms / first).toFixed(1)}x the first K)`);
  }
  await sink.close();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
