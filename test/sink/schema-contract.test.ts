// One contract over every analytics table: the columns the DDL creates (after every migration,
// read back from the engine) = the columns each insert names = the fields of the row's zod
// schema, where one exists. A column added in one place and not the others fails here. (Types,
// engine and order: test/tables/declarations.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYTICS_TABLE_NAMES, INSERT_COLUMNS, type AnalyticsTable, type ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { TABLES } from '../../src/tables/index.ts';
import { openTempSink } from '../helpers/db.ts';

/** Columns the engine computes or fills itself, which no insert names (from the declarations). */
const COMPUTED = Object.fromEntries(TABLES.map((t) => [t.name, Object.keys(t.computed)])) as Partial<Record<AnalyticsTable, readonly string[]>>;

// The row schemas, loaded (a table's row is a loader: zod is loaded only where rows are checked).
const ROW_SCHEMAS = Object.fromEntries(await Promise.all(TABLES.flatMap((t) => (t.row === undefined ? [] : [t.row().then((schema) => [t.name, schema] as const)])))) as Partial<Record<AnalyticsTable, { shape: Record<string, unknown> }>>;

describe('tables, inserts and rows agree', () => {
  let sink: ClickHouseSink;
  let cleanup: () => Promise<void>;
  const ddl = new Map<string, string[]>();
  beforeAll(async () => {
    ({ sink, cleanup } = await openTempSink('schema-contract'));
    const rows = await sink.queryRows<{ table: string; name: string }>(
      `SELECT table, name FROM system.columns WHERE database = currentDatabase() AND table IN (${ANALYTICS_TABLE_NAMES.map((t) => `'${t}'`).join(', ')}) ORDER BY table, position`,
    );
    for (const r of rows) ddl.set(r.table, [...(ddl.get(r.table) ?? []), r.name]);
  }, 60_000);
  afterAll(async () => cleanup());

  it('covers every analytics table the migrations create', () => {
    expect([...ddl.keys()].sort()).toEqual([...ANALYTICS_TABLE_NAMES].sort());
  });

  it.each(ANALYTICS_TABLE_NAMES)('%s: DDL columns = insert columns + computed ones', (table) => {
    expect([...(ddl.get(table) ?? [])].sort()).toEqual([...(INSERT_COLUMNS[table] ?? []), ...(COMPUTED[table] ?? [])].sort());
  });

  it.each(Object.keys(ROW_SCHEMAS) as AnalyticsTable[])('%s: insert columns = the row schema\'s fields', (table) => {
    expect([...(INSERT_COLUMNS[table] ?? [])].sort()).toEqual(Object.keys(ROW_SCHEMAS[table]?.shape ?? {}).sort());
  });
});
