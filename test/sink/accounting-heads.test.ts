// A context the accounting does not hold is restored from its head (accounting_heads: where its
// latest token_usage row is, written by the sink before the rows), read by key; a context
// without a head (rows stored before migration 15) or whose head's row is not stored as the
// latest copy of its event (a process killed between the two inserts, a row written again) is
// restored from its rows, the old way. bench/restore.ts shows the cost flat in the history.
import { beforeAll, describe, expect, it } from 'vitest';
import type { StoredContext } from '../../src/model/sink.ts';
import type { TokenUsageRow } from '../../src/model/usage.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { forEachEngine } from '../helpers/engines.ts';

function usage(session: string, agent: string, event: string, seq: number, ingested: string): TokenUsageRow {
  return {
    event_id: event, ts: `2026-12-01 10:00:${String(seq % 60).padStart(2, '0')}.000`, harness: 'codex', session_id: session, agent_id: agent, host: '', device_id: '',
    turn_id: '', model: 'gpt-5', source: 'estimated', request_id: '', input_tokens: null, output_tokens: null, cache_read_tokens: null, cache_write_tokens: null,
    reasoning_tokens: null, estimated_tokens: '10', content_class: 'text', content_bytes: '40', context_tokens: String(1000 + seq * 10), context_source: 'estimated',
    context_window_tokens: '200000', usage_pct: 0.5, above_threshold: false, threshold_pct: 80, headroom_tokens: '0', drift_estimated_tokens: null,
    drift_observed_tokens: null, drift_content_class: '', last_observed_context: null, estimated_since_observed: String(seq), classes_since_observed: ['text'],
    session_seq: String(seq), flags: [], origin: 'test', ingested_at: ingested,
  };
}

const brief = (c: StoredContext | undefined): [string, string, string] | undefined => (c === undefined ? undefined : [c.session_id, c.context_tokens, c.session_seq]);

await forEachEngine('sink/accounting-heads', (engine) => {
  describe('restoring an accounting context (latestUsage)', () => {
    let sink: ClickHouseSink;
    beforeAll(async () => {
      sink = await engine.openSink('accounting-heads');
    }, 120_000);
    const restore = async (session: string, agent = ''): Promise<[string, string, string] | undefined> => {
      const got = await sink.latestUsage([{ sessionId: session, agentId: agent }]);
      expect(got.length).toBeLessThanOrEqual(1);
      return brief(got[0]);
    };
    /** A row written past the sink (no head), as a database of before migration 15 holds them. */
    const insertRaw = async (row: TokenUsageRow): Promise<void> => {
      await sink.client.insert({ table: 'token_usage', values: [row], format: 'JSONEachRow' });
    };

    it('reads the head of each context, the highest sequence of its rows, whatever batch wrote it', async () => {
      await sink.writeTokenUsage([usage('h1', '', 'e0', 0, '2026-12-01 11:00:00.000'), usage('h1', '', 'e2', 2, '2026-12-01 11:00:00.000'), usage('h1', '', 'e1', 1, '2026-12-01 11:00:00.000')]);
      await sink.writeTokenUsage([usage('h1', '', 'e3', 3, '2026-12-01 11:00:01.000'), usage('h1', 'sub', 's0', 0, '2026-12-01 11:00:01.000')]);
      const heads = await sink.queryRows<{ agent_id: string; seq: string; event_id: string }>(
        "SELECT agent_id, toString(max(session_seq)) AS seq, argMax(event_id, session_seq) AS event_id FROM accounting_heads WHERE session_id = 'h1' GROUP BY agent_id ORDER BY agent_id",
      );
      expect(heads).toEqual([{ agent_id: '', seq: '3', event_id: 'e3' }, { agent_id: 'sub', seq: '0', event_id: 's0' }]);
      expect(await restore('h1')).toEqual(['h1', '1030', '3']);
      expect(await restore('h1', 'sub')).toEqual(['h1', '1000', '0']);
      expect(await restore('h1', 'nobody')).toBeUndefined();
    });

    it('goes by the head, not the rows: a row written past the sink is not seen while the head stands, and is once it is gone', async () => {
      await sink.writeTokenUsage([usage('h2', '', 'e0', 0, '2026-12-01 11:00:00.000'), usage('h2', '', 'e1', 1, '2026-12-01 11:00:00.000')]);
      await insertRaw(usage('h2', '', 'e9', 9, '2026-12-01 11:00:02.000'));
      expect(await restore('h2')).toEqual(['h2', '1010', '1']);
      // Without a head (rows stored before migration 15), the rows are read in order.
      await sink.client.command({ query: "ALTER TABLE accounting_heads DELETE WHERE session_id = 'h2' SETTINGS mutations_sync = 2" });
      expect(await restore('h2')).toEqual(['h2', '1090', '9']);
    });

    it('passes over a head whose row is not stored (killed between the two inserts) and reads the rows', async () => {
      await sink.writeTokenUsage([usage('h3', '', 'e0', 0, '2026-12-01 11:00:00.000'), usage('h3', '', 'e1', 1, '2026-12-01 11:00:00.000')]);
      await sink.client.insert({
        table: 'accounting_heads',
        // Its event is stored, from an earlier batch, with another sequence.
        values: [{ session_id: 'h3', agent_id: '', session_seq: 5, source: 'estimated', event_id: 'e0' }],
        format: 'JSONEachRow',
      });
      expect(await restore('h3')).toEqual(['h3', '1010', '1']);
    });

    it('passes over a head whose row was written again since (an older copy does not count) and reads the rows', async () => {
      await sink.writeTokenUsage([0, 1, 2].map((i) => usage('h4', '', `e${i}`, i, '2026-12-01 11:00:00.000')));
      // e2 again, later, with another sequence and an earlier time: its latest copy is no longer
      // the head's, and e1 is the context's latest row (highest sequence, then time).
      await insertRaw({ ...usage('h4', '', 'e2', 1, '2026-12-01 11:00:04.000'), ts: '2026-12-01 09:00:00.000', context_tokens: '777' });
      expect(await restore('h4')).toEqual(['h4', '1010', '1']);
    });

    it('restores many contexts at once, each by its own way', async () => {
      const got = await sink.latestUsage([
        { sessionId: 'h1', agentId: '' },
        { sessionId: 'h2', agentId: '' },
        { sessionId: 'h3', agentId: '' },
        { sessionId: 'h4', agentId: '' },
        { sessionId: 'h1', agentId: 'sub' },
        { sessionId: 'none', agentId: '' },
      ]);
      expect(got.map(brief).sort()).toEqual([
        ['h1', '1000', '0'],
        ['h1', '1030', '3'],
        ['h2', '1090', '9'],
        ['h3', '1010', '1'],
        ['h4', '1010', '1'],
      ]);
    });
  });
});
