// The analytics tables, each declared once in its own file (table.ts says what a declaration
// holds). A new table: its file, a line here, and a migration in src/sink/ddl.ts that creates it
// (test/tables/declarations.test.ts fails until the migrated database equals the declaration);
// if it is derived, a derivation that fills it.
import { deadLetters } from './dead-letters.ts';
import { discoveryEvents } from './discovery-events.ts';
import { mcpEvents } from './mcp-events.ts';
import { mcpServerState } from './mcp-server-state.ts';
import { mcpToolRegistrations } from './mcp-tool-registrations.ts';
import { thresholdBreaches } from './threshold-breaches.ts';
import { TOKEN_USAGE_HEADS, tokenUsage } from './token-usage.ts';
import { toolCalls } from './tool-calls.ts';
import type { Table } from './table.ts';

export { deadLetters, discoveryEvents, mcpEvents, mcpServerState, mcpToolRegistrations, thresholdBreaches, tokenUsage, toolCalls, TOKEN_USAGE_HEADS };
export type { Table, TableScope } from './table.ts';

/** Every analytics table, in the order dumps and summaries list them. */
export const TABLES = [toolCalls, deadLetters, tokenUsage, thresholdBreaches, mcpEvents, mcpServerState, mcpToolRegistrations, discoveryEvents] as const;

export type AnalyticsTable = (typeof TABLES)[number]['name'];
export type TableNamed<T extends AnalyticsTable> = Extract<(typeof TABLES)[number], { readonly name: T }>;

/** The analytics tables' names, in declaration order. */
export const TABLE_NAMES: readonly AnalyticsTable[] = TABLES.map((t) => t.name);

/** Tables by name; a name declared twice is an error. */
export function tableRegistry(tables: readonly Table<string, never>[]): Readonly<Record<string, Table<string, never>>> {
  const byName: Record<string, Table<string, never>> = {};
  for (const t of tables) {
    if (byName[t.name] !== undefined) throw new Error(`analytics table ${t.name} declared twice`);
    byName[t.name] = t;
  }
  return byName;
}

/** Each table by its name (the module fails to load when a name is declared twice). */
export const TABLE = tableRegistry(TABLES as readonly Table<string, never>[]) as unknown as { readonly [T in AnalyticsTable]: TableNamed<T> };
