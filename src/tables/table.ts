// An analytics table declared once: its name, its row, its columns with their ClickHouse types,
// engine, order, partition, indexes and projections, the time column a retention counts from, how reports scope it and
// what a test dump selects of it. The registry (index.ts) lists every table; the sink's inserts,
// report scoping, retention, the schema contract test and the tests' dumps read it. The
// migrations (src/sink/ddl.ts) stay the history of how a database got here: the contract test
// (test/tables/declarations.test.ts) holds a freshly migrated database equal to these
// declarations, column by column, engine, order and partition.
import type { ZodObject, ZodRawShape } from 'zod';

/**
 * How reports scope a table: `event` tables have an event time `ts`, a `harness` and a `host`
 * (--since, --until, --harness, --host apply); `host` tables only a `host` (dead letters).
 */
export type TableScope = 'event' | 'host';

/** The scopes a row's columns allow: `event` needs ts, harness and host; `host` needs host. */
type ScopesOf<Row> = 'host' extends keyof Row ? (('ts' | 'harness') extends keyof Row ? TableScope : 'host') : never;

export interface TableDeclaration<N extends string, Row> {
  readonly name: N;
  /**
   * Loads the row's zod schema, where rows are checked at a boundary (a row without one is typed
   * only). Loaded, not imported: zod costs ~70 ms of the start of every process that loads it.
   */
  readonly row?: () => Promise<ZodObject<ZodRawShape>>;
  /**
   * Every column an insert names, in insert order, with its ClickHouse type (DEFAULT and
   * EPHEMERAL included): one per field of the row, no more (the compiler checks both ways).
   */
  readonly columns: { readonly [K in keyof Row]-?: string };
  /** Columns the engine fills itself (MATERIALIZED, DEFAULT of an ephemeral one): no insert names them. */
  readonly computed?: Readonly<Record<string, string>>;
  readonly engine: string;
  readonly partitionBy?: string;
  readonly orderBy: string;
  /** Data-skipping indexes, as the engine writes them (`INDEX name expr TYPE type GRANULARITY n`). */
  readonly indexes?: readonly string[];
  /** Projections, as the engine writes them (`PROJECTION name (SELECT …)`). */
  readonly projections?: readonly string[];
  /** The time column --retention-days counts from. */
  readonly retention: keyof Row & string;
  readonly scope: ScopesOf<Row>;
  /** What a test dump of the table selects (the columns that differ between paths by design left out). */
  readonly dumpSelect: string;
}

export interface Table<N extends string = string, Row = Record<string, unknown>> {
  readonly name: N;
  /** Loads the row's zod schema (see TableDeclaration.row). */
  readonly row: (() => Promise<ZodObject<ZodRawShape>>) | undefined;
  /** The insert columns, in order. */
  readonly columns: readonly (keyof Row & string)[];
  /** Each insert column's ClickHouse type, then each computed column's. */
  readonly types: Readonly<Record<string, string>>;
  readonly computed: Readonly<Record<string, string>>;
  readonly engine: string;
  readonly partitionBy: string | undefined;
  readonly orderBy: string;
  readonly indexes: readonly string[];
  readonly projections: readonly string[];
  readonly retention: keyof Row & string;
  readonly scope: TableScope;
  readonly dumpSelect: string;
}

/**
 * Declares a table of rows `Row`: `defineTable<ToolCallRow>()({ name: 'tool_calls', … })`.
 * (Two calls, so that the row is given and the name is inferred as a literal.)
 */
export function defineTable<Row>(): <const N extends string>(d: TableDeclaration<N, Row>) => Table<N, Row> {
  return (d) => {
    const columns = Object.keys(d.columns) as (keyof Row & string)[];
    const computed = d.computed ?? {};
    for (const c of Object.keys(computed)) if (c in d.columns) throw new Error(`table ${d.name}: column ${c} is both inserted and computed`);
    if (!columns.includes(d.retention)) throw new Error(`table ${d.name}: retention column ${d.retention} is not a column`);
    return {
      name: d.name,
      row: d.row,
      columns,
      types: { ...(d.columns as Record<string, string>), ...computed },
      computed,
      engine: d.engine,
      partitionBy: d.partitionBy,
      orderBy: d.orderBy,
      indexes: d.indexes ?? [],
      projections: d.projections ?? [],
      retention: d.retention,
      scope: d.scope as TableScope,
      dumpSelect: d.dumpSelect,
    };
  };
}
