// A threshold breach already stored as it is is not written again (a run killed between its
// breaches and its token_usage rows writes the same breaches on its rerun): plain count() stays
// the number of breaches; a breach whose figures changed is written (FINAL keeps the latest).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BreachRow } from '../../src/model/usage.ts';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { forEachEngine } from '../helpers/engines.ts';

const breach = (id: string, used: string, at: string): BreachRow => ({
  breach_id: id, session_id: 's-breach', agent_id: '', host: 'h', device_id: 'd', harness: 'claude_code', ts: '2026-12-01 10:00:00.000',
  model: 'claude-opus-4-6', used_tokens: used, context_window_tokens: '200000', threshold_pct: 85, headroom_tokens: '0', usage_pct: Number(used) / 2000,
  source: 'observed', event_id: `e-${id}`, event_kind: 'usage', ingested_at: at,
});

await forEachEngine('sink/breaches-once', (engine) => {
  describe('threshold breaches written again', () => {
    let sink: ClickHouseSink;
    beforeAll(async () => {
      sink = await engine.openSink('breaches-once');
    }, 120_000);
    afterAll(async () => undefined);
    const counts = async (): Promise<{ plain: number; final: number }> => {
      const [r] = await sink.queryRows<{ plain: string; final: string }>('SELECT (SELECT count() FROM threshold_breaches) AS plain, (SELECT count() FROM threshold_breaches FINAL) AS final');
      return { plain: Number(r?.plain), final: Number(r?.final) };
    };

    it('are stored once when they say the same, and again when their figures changed', async () => {
      await sink.writeBreaches([breach('b1', '171000', '2026-12-01 10:00:01.000'), breach('b2', '172500', '2026-12-01 10:00:01.000')]);
      await sink.writeBreaches([breach('b1', '171000', '2026-12-01 10:05:00.000'), breach('b2', '172500', '2026-12-01 10:05:00.000')]);
      expect(await counts()).toEqual({ plain: 2, final: 2 });
      await sink.writeBreaches([breach('b2', '173000', '2026-12-01 10:06:00.000')]);
      expect(await counts()).toEqual({ plain: 3, final: 2 });
      const [r] = await sink.queryRows<{ used: string }>("SELECT toString(used_tokens) AS used FROM threshold_breaches FINAL WHERE breach_id = 'b2'");
      expect(r?.used).toBe('173000');
    });
  });
});
