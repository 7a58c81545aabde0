// A derived table as a component (issue 31 step 2): given what a batch stores, it reads from the
// store only the state its keys need (the last state per key, never a key's history), derives its
// rows and writes them. The batch writer (src/pipeline/batch-writer.ts) runs each in DERIVATIONS' order after
// the batch's own rows and names none of their tables.
import type { Sink } from '../model/sink.ts';

export interface Derivation<Item> {
  /** The table it writes, for messages. */
  readonly name: string;
  /**
   * Derives and writes the rows `items` give (`computedAt`: the version the table keeps the
   * latest of). Gives how many rows it added that the table did not hold (a summary's count).
   * Safe to run again after a failure: it derives from what is stored, and what it wrote
   * already is stored once.
   */
  run(store: Sink, items: readonly Item[], computedAt: string): Promise<number>;
}
