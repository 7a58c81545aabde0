// The derivations a batch runs, in order (src/derive/stage.ts): the accounting, the MCP server
// states (which also stores the lifecycle events, after their states), the tool registrations and
// discovery. A new derived table is its derivation here (and its table declaration, src/tables/).
import type { AccountingConfig } from '../accounting/session.ts';
import type { McpToolRegistrationRow } from '../model/mcp.ts';
import { AccountingDerivation } from './accounting.ts';
import { discoveryDerivation } from './discovery.ts';
import { mcpStateDerivation } from './mcp-state.ts';
import type { Derivation } from './stage.ts';

/** The tools a batch's tools/list snapshots register, as decoded (nothing to read back). */
export const registrationsDerivation: Derivation<McpToolRegistrationRow> = {
  name: 'mcp_tool_registrations',
  select: (batch) => batch.registrations,
  async run(store, items) {
    await store.writeMcpToolRegistrations(items);
    return { mcpToolRegistrations: items.length };
  },
};

/** A batch writer's derivations, in the order they run; the accounting's holds the writer's session contexts. */
export function derivationsFor(accounting?: AccountingConfig): readonly Derivation<unknown>[] {
  return [new AccountingDerivation(accounting), mcpStateDerivation, registrationsDerivation, discoveryDerivation];
}
