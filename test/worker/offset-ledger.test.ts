// The offset ledger alone (no broker): what a generation may commit, and when.
import { describe, expect, it } from 'vitest';
import { OffsetLedger } from '../../src/worker/offset-ledger.ts';

describe('OffsetLedger', () => {
  it('commits nothing before the sealed batch is acknowledged, then one past the last record of each partition', () => {
    const ledger = new OffsetLedger(3);
    expect(ledger.generation).toBe(3);
    ledger.add(0, '10');
    ledger.add(1, '7');
    ledger.add(0, '11');
    expect(ledger.openEvents).toBe(3);
    expect(ledger.hasUncommitted).toBe(false);
    expect(ledger.offsetsToCommit()).toEqual([]);

    expect(ledger.seal()).toBe(true);
    expect(ledger.hasSealed).toBe(true);
    expect(ledger.sealedEvents).toBe(3);
    expect(ledger.openEvents).toBe(0);
    // Sealed but not written: still nothing to commit.
    expect(ledger.offsetsToCommit()).toEqual([]);

    expect(ledger.acknowledgeSealed()).toBe(3);
    expect(ledger.hasSealed).toBe(false);
    expect(ledger.uncommittedEvents).toBe(3);
    expect(ledger.offsetsToCommit()).toEqual([
      { partition: 0, offset: '12' },
      { partition: 1, offset: '8' },
    ]);
  });

  it('keeps the open batch behind a sealed one out of the commit (pipelining)', () => {
    const ledger = new OffsetLedger(0);
    ledger.add(0, '0');
    ledger.add(0, '1');
    ledger.seal();
    // The next batch fills while the sealed one is written.
    ledger.add(0, '2');
    ledger.add(2, '40');
    expect(ledger.seal()).toBe(false); // one sealed batch at a time
    ledger.acknowledgeSealed();
    expect(ledger.offsetsToCommit()).toEqual([{ partition: 0, offset: '2' }]);
    expect(ledger.openEvents).toBe(2);
    // Once the first is committed, the second is sealed, written, committed.
    expect(ledger.committed(ledger.offsetsToCommit())).toBe(2);
    expect(ledger.hasUncommitted).toBe(false);
    expect(ledger.seal()).toBe(true);
    expect(ledger.acknowledgeSealed()).toBe(2);
    expect(ledger.offsetsToCommit()).toEqual([
      { partition: 0, offset: '3' },
      { partition: 2, offset: '41' },
    ]);
  });

  it('an empty open batch is not sealed, and acknowledging nothing changes nothing', () => {
    const ledger = new OffsetLedger(0);
    expect(ledger.seal()).toBe(false);
    expect(ledger.acknowledgeSealed()).toBe(0);
    expect(ledger.hasUncommitted).toBe(false);
  });

  it('a failed write leaves the batch sealed: retried, it is acknowledged once', () => {
    const ledger = new OffsetLedger(0);
    ledger.add(5, '99');
    ledger.seal();
    // (the write failed: nothing is acknowledged, the batch stays sealed for the retry)
    expect(ledger.hasSealed).toBe(true);
    expect(ledger.offsetsToCommit()).toEqual([]);
    expect(ledger.acknowledgeSealed()).toBe(1);
    expect(ledger.acknowledgeSealed()).toBe(0);
    expect(ledger.uncommittedEvents).toBe(1);
  });

  it('offsets beyond 2^53 stay exact', () => {
    const ledger = new OffsetLedger(0);
    ledger.add(0, '9007199254740993');
    ledger.seal();
    ledger.acknowledgeSealed();
    expect(ledger.offsetsToCommit()).toEqual([{ partition: 0, offset: '9007199254740994' }]);
  });

  it('a commit of older offsets keeps a partition whose offset moved on meanwhile', () => {
    const ledger = new OffsetLedger(0);
    ledger.add(0, '4');
    ledger.add(1, '4');
    ledger.seal();
    ledger.acknowledgeSealed();
    const sent = ledger.offsetsToCommit();
    // Before the commit answered, a later batch of partition 1 was acknowledged.
    ledger.add(1, '9');
    ledger.seal();
    ledger.acknowledgeSealed();
    ledger.committed(sent);
    expect(ledger.offsetsToCommit()).toEqual([{ partition: 1, offset: '10' }]);
    expect(ledger.hasUncommitted).toBe(true);
  });

  it('a failed commit keeps the offsets for the next attempt', () => {
    const ledger = new OffsetLedger(0);
    ledger.add(0, '1');
    ledger.seal();
    ledger.acknowledgeSealed();
    ledger.nextCommitRetryAtMs = 1_000;
    // (the commit threw: committed() is not called)
    expect(ledger.offsetsToCommit()).toEqual([{ partition: 0, offset: '2' }]);
    expect(ledger.uncommittedEvents).toBe(1);
  });

  it('remembers the first rebalance error of the generation', () => {
    const ledger = new OffsetLedger(1);
    expect(ledger.isRebalancing).toBe(false);
    const first = new Error('The group is rebalancing');
    ledger.noteRebalance(first);
    ledger.noteRebalance(new Error('again'));
    expect(ledger.isRebalancing).toBe(true);
    expect(ledger.rebalance).toBe(first);
  });

  it('a new generation starts empty: what the old one held uncommitted is not carried over', () => {
    const old = new OffsetLedger(0);
    old.add(0, '5');
    old.seal();
    old.acknowledgeSealed();
    old.add(0, '6');
    const next = new OffsetLedger(1);
    expect(next.offsetsToCommit()).toEqual([]);
    expect(next.openEvents + next.sealedEvents + next.uncommittedEvents).toBe(0);
    // The old generation's late acknowledgement stays in the old ledger.
    old.seal();
    old.acknowledgeSealed();
    expect(next.hasUncommitted).toBe(false);
  });
});
