// Which copy of a call discovery keeps (src/discovery/copies.ts), as pure rules: finished over
// pending, the same content leaves the stored copy, two finished copies that differ by the rank
// tool_calls gave them; and which derived rows differ from the stored ones.
import { describe, expect, it } from 'vitest';
import { changedRows, chooseCopies, copiesToRank, copyVersions } from '../../src/discovery/copies.ts';
import { deriveDiscoveryPerContext } from '../../src/discovery/discovery.ts';
import type { DiscoveryObservation } from '../../src/model/mcp.ts';

function obs(status: DiscoveryObservation['status'], ingestedAt: string, extra: Partial<DiscoveryObservation> = {}): DiscoveryObservation {
  return {
    event_id: 'e1', ts: '2026-12-12 10:00:00.000', harness: 'grok_build_concise', session_id: 's', agent_id: '', host: '', device_id: '', turn_id: 't',
    model: 'grok-4', tool_name: 'use_tool', status, source: `f:${ingestedAt}`, ingested_at: ingestedAt, query: '', result_tools: [], reported_budget_exhausted: false,
    refused_tool: '', recovery_query: '', called_tool: 'exports__archiveRun', discovery_kind: 'call', ...extra,
  };
}
const refusal = (ingestedAt: string): DiscoveryObservation => obs('error', ingestedAt, { discovery_kind: 'refusal', called_tool: '', refused_tool: 'archiveRun' });

describe('chooseCopies', () => {
  it('keeps a finished copy over a pending one, in either order', () => {
    expect(chooseCopies([obs('pending', '2026-12-01 00:00:00.000'), refusal('2026-12-01 00:00:00.000')])).toEqual([refusal('2026-12-01 00:00:00.000')]);
    expect(chooseCopies([refusal('2026-12-01 00:00:00.000'), obs('pending', '2026-12-02 00:00:00.000')])).toEqual([refusal('2026-12-01 00:00:00.000')]);
  });

  it('leaves the first copy when a later one says the same (only source and ingestion differ)', () => {
    const first = obs('ok', '2026-12-01 00:00:00.000');
    expect(chooseCopies([first, obs('ok', '2026-12-02 00:00:00.000')])).toEqual([first]);
    expect(copiesToRank([first, obs('ok', '2026-12-02 00:00:00.000')])).toEqual([]);
  });

  it('ranks two finished copies that differ by the versions tool_calls gave them, else by ingestion', () => {
    const big = obs('ok', '2026-12-01 00:00:00.000', { discovery_kind: 'search', called_tool: '', tool_name: 'search_tool', result_tools: ['exports__archiveRun'] });
    const small = obs('ok', '2026-12-02 00:00:00.000', { discovery_kind: 'search', called_tool: '', tool_name: 'search_tool' });
    expect(copiesToRank([big, small])).toEqual([{ harness: 'grok_build_concise', sessionId: 's', eventId: 'e1' }]);
    const version = (o: DiscoveryObservation, v: string) => ({ session_id: o.session_id, event_id: o.event_id, status: o.status, source: o.source, ingested_at: o.ingested_at, row_version: v });
    const versions = copyVersions([version(big, '1006600000000000000'), version(small, '1001900000000000001')]);
    expect(chooseCopies([big, small], versions)).toEqual([big]);
    expect(chooseCopies([small, big], versions)).toEqual([big]);
    // tool_calls holds one of them only: that one.
    expect(chooseCopies([big, small], copyVersions([version(big, '1006600000000000000')]))).toEqual([big]);
    expect(chooseCopies([big, small], copyVersions([version(small, '1001900000000000001')]))).toEqual([small]);
    // No rank known: the later ingestion.
    expect(chooseCopies([big, small])).toEqual([small]);
  });
});

describe('changedRows', () => {
  it('writes only rows that differ from the stored ones in a field other than computed_at', () => {
    const stored = deriveDiscoveryPerContext([obs('ok', '2026-12-01 00:00:00.000')], '2026-12-01 00:00:01.000');
    const again = deriveDiscoveryPerContext([...stored, obs('ok', '2026-12-02 00:00:00.000')], '2026-12-02 00:00:01.000');
    expect(changedRows(again, stored)).toEqual([]);
    const healed = deriveDiscoveryPerContext([...stored, refusal('2026-12-02 00:00:00.000')], '2026-12-02 00:00:01.000');
    expect(changedRows(healed, stored).map((r) => [r.discovery_kind, r.status, r.computed_at])).toEqual([['refusal', 'error', '2026-12-02 00:00:01.000']]);
  });

  it('compares an engine Bool given as 0/1 and a number given as text as equal', () => {
    const [row] = deriveDiscoveryPerContext([obs('ok', '2026-12-01 00:00:00.000')], 'x');
    const asStored = { ...row, after_search: 0, turn_search_seq: '0' } as unknown as NonNullable<typeof row>;
    expect(changedRows([row as NonNullable<typeof row>], [asStored])).toEqual([]);
  });
});
