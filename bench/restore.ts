// What rebuilding one session context costs the accounting (Sink.latestUsage, run for a context a
// process does not hold: at its start, and after an eviction) against the context's stored
// history: K token_usage rows of one session, K = 1 k, 100 k, 1 M (each its own session in one
// fresh embedded database), the lookup timed 20 times each, the mean printed with the ratio to
// K = 1 k. Two ways: by the context's head (accounting_heads, which the sink writes with every
// batch: reads by key, issue 31 asks it flat in K), and without one (rows stored before
// migration 15, or a head whose batch was never stored: the context's rows read in order).
// Usage: npx tsx bench/restore.ts [K…]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClickHouseSink } from '../src/sink/clickhouse.ts';

const REPEATS = 20;
const SIZES = process.argv.slice(2).map(Number);
const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-bench-restore-'));
try {
  const sink = await ClickHouseSink.open({ db: join(tmp, 'db') });
  let first: { byHead: number; byRows: number } | undefined;
  for (const k of SIZES.length > 0 ? SIZES : [1_000, 100_000, 1_000_000]) {
    await sink.client.command({ query: `INSERT INTO token_usage (event_id, ts, harness, session_id, turn_id, model, source, request_id, content_class, content_bytes,
        context_tokens, context_source, usage_pct, above_threshold, threshold_pct, headroom_tokens, estimated_since_observed, session_seq, origin, ingested_at)
      SELECT concat('e', toString(number)), toDateTime64('2026-12-01 00:00:00', 3) + number, 'codex', 'S${k}', '', 'gpt-5', 'estimated', '', 'text', 10,
        number, 'estimated', 0, false, 80, 0, 0, number, 'bench', now64(3) FROM numbers(${k})` });
    // The head the sink writes with a batch (writeTokenUsage): where the context's latest row is.
    await sink.client.command({ query: `INSERT INTO accounting_heads SELECT session_id, agent_id, session_seq, source, event_id FROM token_usage WHERE session_id = 'S${k}' ORDER BY session_seq DESC LIMIT 1` });
    const timed = async (): Promise<number> => {
      const [state] = await sink.latestUsage([{ sessionId: `S${k}`, agentId: '' }]);
      if (state?.session_seq !== String(k - 1)) throw new Error(`K = ${k}: restored seq ${state?.session_seq}, expected ${k - 1}`);
      const t = performance.now();
      for (let i = 0; i < REPEATS; i++) await sink.latestUsage([{ sessionId: `S${k}`, agentId: '' }]);
      return (performance.now() - t) / REPEATS;
    };
    const byHead = await timed();
    await sink.client.command({ query: `ALTER TABLE accounting_heads DELETE WHERE session_id = 'S${k}' SETTINGS mutations_sync = 2` });
    const byRows = await timed();
    first ??= { byHead, byRows };
    console.log(
      `K = ${String(k).padStart(9)}: by its head ${byHead.toFixed(1).padStart(7)} ms (${(byHead / first.byHead).toFixed(2)}x the first K)` +
        `   without a head ${byRows.toFixed(1).padStart(7)} ms (${(byRows / first.byRows).toFixed(2)}x)`,
    );
  }
  await sink.close();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
