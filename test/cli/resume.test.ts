// Issue 29 item 8: a rerun says plainly what it found stored ("already stored: 457, nothing new"),
// never "N of the 0 event(s) read".
import { describe, expect, it } from 'vitest';
import { alreadyStoredLine } from '../../src/cli/resume.ts';

describe('alreadyStoredLine', () => {
  it('says nothing when nothing was stored before', () => {
    expect(alreadyStoredLine(0, 457)).toBeUndefined();
  });
  it('a complete second run: nothing new', () => {
    expect(alreadyStoredLine(457, 457)).toBe('already stored: 457 of the 457 event(s) read (by an earlier run), nothing new');
  });
  it('a run after one cut short: how many are new', () => {
    expect(alreadyStoredLine(100, 457)).toBe('already stored: 100 of the 457 event(s) read (by an earlier run, not written again); new: 357');
  });
  it('never more stored than read, and a run that read nothing says so', () => {
    expect(alreadyStoredLine(21, 0)).toBe('already stored: 21 event(s) of these files from an earlier run; none read in this run');
    expect(alreadyStoredLine(30, 20)).toBe('already stored: 20 of the 20 event(s) read (by an earlier run), nothing new');
  });
});
