// A context the accounting does not hold is restored from its latest token_usage row, found by
// key: token_usage's projection `heads` (migration 15) holds each context's highest (sequence,
// time, ingestion) and where that row is, written in each part with its rows; the row is then
// read by the table's key. A context whose top row is an older copy of its event (a re-run wrote
// it again) is read the full way. bench/restore.ts shows the cost flat in the history.
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

    it('finds the highest sequence of each context, whatever batch wrote it, from the projection', async () => {
      await sink.writeTokenUsage([usage('h1', '', 'e0', 0, '2026-12-01 11:00:00.000'), usage('h1', '', 'e2', 2, '2026-12-01 11:00:00.000'), usage('h1', '', 'e1', 1, '2026-12-01 11:00:00.000')]);
      await sink.writeTokenUsage([usage('h1', '', 'e3', 3, '2026-12-01 11:00:01.000'), usage('h1', 'sub', 's0', 0, '2026-12-01 11:00:01.000')]);
      expect(await restore('h1')).toEqual(['h1', '1030', '3']);
      expect(await restore('h1', 'sub')).toEqual(['h1', '1000', '0']);
      expect(await restore('h1', 'nobody')).toBeUndefined();
      // The engine answers latestUsage's first query from the projection (one small read per
      // part), not from the context's rows: that query, as the sink sent it, explained.
      const sent: { query: string; query_params?: Record<string, unknown> }[] = [];
      const queryRows = sink.queryRows.bind(sink);
      sink.queryRows = (async (q: string | { query: string; query_params?: Record<string, unknown> }) => {
        if (typeof q !== 'string') sent.push(q);
        return queryRows(q as never);
      }) as typeof sink.queryRows;
      try {
        await sink.latestUsage([{ sessionId: 'h1', agentId: '' }]);
      } finally {
        sink.queryRows = queryRows;
      }
      const first = sent[0];
      expect(first?.query).toContain('max(session_seq)');
      const explained = await sink.client.query({ query: `EXPLAIN projections = 1 ${first?.query ?? ''}`, query_params: first?.query_params ?? {}, format: 'TabSeparatedRaw' });
      const plan = { explain: await explained.text() };
      expect(plan?.explain).toMatch(/ReadFromMergeTree \(heads\)/);
    });

    it('counts every stored row, however it was written', async () => {
      await sink.writeTokenUsage([usage('h2', '', 'e0', 0, '2026-12-01 11:00:00.000'), usage('h2', '', 'e1', 1, '2026-12-01 11:00:00.000')]);
      await sink.client.insert({ table: 'token_usage', values: [usage('h2', '', 'e9', 9, '2026-12-01 11:00:02.000')], format: 'JSONEachRow' });
      expect(await restore('h2')).toEqual(['h2', '1090', '9']);
    });

    it('breaks a tie of sequences by time, then ingestion, as the rows in order would', async () => {
      await sink.writeTokenUsage([usage('h3', '', 'a', 4, '2026-12-01 11:00:00.000'), { ...usage('h3', '', 'b', 4, '2026-12-01 11:00:00.000'), ts: '2026-12-01 10:30:00.000', context_tokens: '555' }]);
      expect(await restore('h3')).toEqual(['h3', '555', '4']);
      await sink.writeTokenUsage([{ ...usage('h3', '', 'c', 4, '2026-12-01 11:00:05.000'), ts: '2026-12-01 10:30:00.000', context_tokens: '666' }]);
      expect(await restore('h3')).toEqual(['h3', '666', '4']);
    });

    it('passes over a top row whose event was written again since (an older copy does not count) and reads the rows', async () => {
      await sink.writeTokenUsage([0, 1, 2].map((i) => usage('h4', '', `e${i}`, i, '2026-12-01 11:00:00.000')));
      // e2 again, later, with another sequence and an earlier time: its latest copy is no longer
      // the top, and e1 is the context's latest row (highest sequence, then time).
      await sink.writeTokenUsage([{ ...usage('h4', '', 'e2', 1, '2026-12-01 11:00:04.000'), ts: '2026-12-01 09:00:00.000', context_tokens: '777' }]);
      expect(await restore('h4')).toEqual(['h4', '1010', '1']);
    });

    it('holds through merges (the projection is merged as it is: a copy it names that the merge removed sends its context the full way)', async () => {
      await sink.client.command({ query: 'OPTIMIZE TABLE token_usage FINAL' });
      expect(await restore('h1')).toEqual(['h1', '1030', '3']);
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
        ['h3', '666', '4'],
        ['h4', '1010', '1'],
      ]);
    });
  });
});
