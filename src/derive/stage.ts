// A derived table as a component (issue 31 step 2): given what a batch stores, it reads from the
// store only the state its keys need (the last state per key, never a key's history), derives its
// rows and writes them. The batch writer (src/pipeline/batch-writer.ts) writes a batch's own rows
// (dead letters, tool calls), then runs each derivation of derivationsFor() (src/derive/index.ts)
// in order, and names none of their tables.
import type { DeadLetterRow } from '../model/records.ts';
import type { DiscoveryObservation, McpEventRow, McpToolRegistrationRow } from '../model/mcp.ts';
import type { Sink } from '../model/sink.ts';
import type { AccountedEvent } from './accounting.ts';

/** What a batch hands its derivations. */
export interface BatchEvents {
  /** Every event of the batch in arrival order, as the batch keeps it (the accounting's input). */
  readonly events: readonly AccountedEvent[];
  readonly deadLetters: readonly DeadLetterRow[];
  /** The batch's MCP lifecycle events (stored or not yet). */
  readonly mcpEvents: readonly McpEventRow[];
  /** The tools the batch's tools/list snapshots register. */
  readonly registrations: readonly McpToolRegistrationRow[];
  /** The discovery observations of the batch's tool calls. */
  readonly discovery: readonly DiscoveryObservation[];
}

/** The summary's counts a derivation adds to (src/pipeline/batch-writer.ts PipelineCounts). */
export type DerivedCount = 'estimateRows' | 'breaches' | 'duplicatesSkipped' | 'contextsEvicted' | 'mcpServerStateRows' | 'mcpToolRegistrations' | 'discoveryEvents';
export type DerivedCounts = { readonly [K in DerivedCount]?: number };

export interface Derivation<Item> {
  /** The table it writes, for messages. */
  readonly name: string;
  /** Its input among a batch's events. */
  select(batch: BatchEvents): readonly Item[];
  /**
   * Derives and writes the rows `items` give (`computedAt`: the version the table keeps the
   * latest of). Gives what it adds to the summary's counts (rows the table did not hold).
   * Safe to run again after a failure with the same items: it derives from what is stored (or,
   * the accounting, keeps what it derived for them), and what it wrote already is stored once.
   */
  run(store: Sink, items: readonly Item[], computedAt: string): Promise<DerivedCounts>;
}
