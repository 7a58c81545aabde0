// The table declarations (src/tables/) against the database the migrations make, on both
// engines: each column's name, type and default in insert order, the computed columns, the
// engine, the partition, the order, indexes and projections (columns by name: a declaration lists them in insert
// order), read back from the engine's own CREATE statement and
// parsed here (not by the code under test). A declaration edited without its migration, or a
// migration without its declaration, fails here; so does a name declared twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { deadLetters, TABLE_NAMES, TABLES, tableRegistry, toolCalls, type Table } from '../../src/tables/index.ts';
import { forEachEngine } from '../helpers/engines.ts';

interface Created {
  readonly columns: [string, string][];
  readonly indexes: string[];
  readonly projections: string[];
  readonly engine: string;
  readonly partition: string | undefined;
  readonly order: string;
}

/** A CREATE TABLE statement as the engine prints it: its column definitions, engine, partition and order. */
function parseCreate(create: string): Created {
  const open = create.indexOf('(');
  let depth = 0;
  let close = -1;
  for (let i = open; i < create.length; i++) {
    if (create[i] === '(') depth++;
    else if (create[i] === ')' && --depth === 0) {
      close = i;
      break;
    }
  }
  const defs: string[] = [];
  let cur = '';
  depth = 0;
  for (const ch of create.slice(open + 1, close)) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      defs.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  defs.push(cur.trim());
  const indexes = defs.filter((d) => d.startsWith('INDEX '));
  const projections = defs.filter((d) => d.startsWith('PROJECTION '));
  const columns = defs.filter((d) => !d.startsWith('INDEX ') && !d.startsWith('PROJECTION ')).map((d) => {
    const m = /^`([^`]+)` ([\s\S]+)$/.exec(d);
    if (m === null) throw new Error(`not a column definition: ${d}`);
    return [m[1] as string, m[2] as string] as [string, string];
  });
  const rest = create.slice(close + 1).replace(/\s+/g, ' ');
  return {
    columns,
    indexes,
    projections,
    engine: /ENGINE = (.*?) (?:PARTITION BY|ORDER BY)/.exec(rest)?.[1] ?? '?',
    partition: /PARTITION BY (.*?) ORDER BY/.exec(rest)?.[1],
    order: /ORDER BY (.*?)(?: SETTINGS| TTL|$)/.exec(rest)?.[1] ?? '?',
  };
}

describe('the table registry', () => {
  it('rejects a name declared twice', () => {
    expect(() => tableRegistry([toolCalls, deadLetters, toolCalls] as unknown as Table<string, never>[])).toThrow('analytics table tool_calls declared twice');
    expect(Object.keys(tableRegistry(TABLES as unknown as Table<string, never>[]))).toEqual([...TABLE_NAMES]);
  });

  it('gives every table a retention column, a dump and a scope its columns allow', () => {
    for (const t of TABLES) {
      expect(t.columns, t.name).toContain(t.retention);
      expect(t.dumpSelect.length, t.name).toBeGreaterThan(0);
      const cols = t.columns as readonly string[];
      expect(cols, t.name).toContain('host');
      if (t.scope === 'event') for (const c of ['ts', 'harness']) expect(cols, t.name).toContain(c);
    }
  });

  it('declares a zod row whose fields are the insert columns, where a row has one', async () => {
    let checked = 0;
    for (const t of TABLES) {
      if (t.row === undefined) continue;
      expect(Object.keys((await t.row()).shape).sort(), t.name).toEqual([...t.columns].sort());
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(6);
  });
});

await forEachEngine('tables/declarations', (engine) => {
  describe('each declaration = the migrated table', () => {
    let sink: ClickHouseSink;
    const created = new Map<string, Created>();
    beforeAll(async () => {
      sink = await engine.openSink('declarations');
      const rows = await sink.queryRows<{ name: string; create_table_query: string }>(
        `SELECT name, create_table_query FROM system.tables WHERE database = currentDatabase() AND name IN (${TABLE_NAMES.map((t) => `'${t}'`).join(', ')})`,
      );
      for (const r of rows) created.set(r.name, parseCreate(r.create_table_query));
    }, 120_000);

    it('finds every declared table', () => {
      expect([...created.keys()].sort()).toEqual([...TABLE_NAMES].sort());
    });

    it.each(TABLES.map((t) => [t.name, t] as const))('%s: columns with their types, engine, partition, order, indexes, projections', (_name, t) => {
      const c = created.get(t.name);
      expect(c).toBeDefined();
      if (c === undefined) return;
      // By name: a declaration lists its columns in insert order, which need not be the table's.
      const byName = (list: [string, string][]): Record<string, string> => Object.fromEntries([...list].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      expect(byName(c.columns.filter(([n]) => !(n in t.computed)))).toEqual(byName(Object.entries(t.types).filter(([n]) => !(n in t.computed))));
      expect(c.columns.filter(([n]) => n in t.computed)).toEqual(Object.entries(t.computed));
      expect(c.engine).toBe(t.engine);
      expect(c.partition).toBe(t.partitionBy);
      expect(c.order).toBe(t.orderBy);
      expect(c.indexes).toEqual(t.indexes);
      expect(c.projections).toEqual(t.projections);
    });
  });
});
