// What rebuilding one session context costs the accounting (Sink.latestUsage, run for a context a
// process does not hold: at its start, and after an eviction) against the context's stored
// history: K token_usage rows of one session, K = 1 k, 100 k, 1 M (each its own session in one
// fresh embedded database), the lookup timed 20 times each, the mean printed with the ratio to
// K = 1 k. latestUsage finds the context's latest row through token_usage's projection `heads`
// (migration 15) and reads it by key; issue 31 asks its cost flat in K. The baseline, in the same
// run: the read it replaced (the context's rows read in order for the highest sequence, as before
// migration 15), linear in K.
// Usage: npx tsx bench/restore.ts [K…]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClickHouseSink } from '../src/sink/clickhouse.ts';

const REPEATS = 20;
const SIZES = process.argv.slice(2).map(Number);
const tmp = mkdtempSync(join(tmpdir(), 'toolcanon-bench-restore-'));

async function mean(run: () => Promise<unknown>): Promise<number> {
  await run();
  const t = performance.now();
  for (let i = 0; i < REPEATS; i++) await run();
  return (performance.now() - t) / REPEATS;
}

try {
  const sink = await ClickHouseSink.open({ db: join(tmp, 'db') });
  let first: { byKey: number; inOrder: number } | undefined;
  for (const k of SIZES.length > 0 ? SIZES : [1_000, 100_000, 1_000_000]) {
    await sink.client.command({ query: `INSERT INTO token_usage (event_id, ts, harness, session_id, turn_id, model, source, request_id, content_class, content_bytes,
        context_tokens, context_source, usage_pct, above_threshold, threshold_pct, headroom_tokens, estimated_since_observed, session_seq, origin, ingested_at)
      SELECT concat('e', toString(number)), toDateTime64('2026-12-01 00:00:00', 3) + number, 'codex', 'S${k}', '', 'gpt-5', 'estimated', '', 'text', 10,
        number, 'estimated', 0, false, 80, 0, 0, number, 'bench', now64(3) FROM numbers(${k})` });
    const [state] = await sink.latestUsage([{ sessionId: `S${k}`, agentId: '' }]);
    if (state?.session_seq !== String(k - 1)) throw new Error(`K = ${k}: restored seq ${state?.session_seq}, expected ${k - 1}`);
    const byKey = await mean(() => sink.latestUsage([{ sessionId: `S${k}`, agentId: '' }]));
    const inOrder = await mean(() =>
      sink.queryRows({
        query: `SELECT session_id, agent_id, source, event_id, toString(ingested_at) AS ingested, session_seq FROM token_usage
          WHERE session_id IN {sids:Array(String)} ORDER BY session_seq DESC, ts DESC, ingested_at DESC LIMIT 1 BY session_id, agent_id`,
        query_params: { sids: [`S${k}`] },
      }),
    );
    first ??= { byKey, inOrder };
    console.log(
      `K = ${String(k).padStart(9)}: latestUsage ${byKey.toFixed(1).padStart(7)} ms (${(byKey / first.byKey).toFixed(2)}x the first K)` +
        `   the rows in order ${inOrder.toFixed(1).padStart(7)} ms (${(inOrder / first.inOrder).toFixed(2)}x)`,
    );
  }
  await sink.close();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
