// The schema on a ClickHouse cluster (`--cluster NAME`, or $TOOLCANON_CLICKHOUSE_CLUSTER): a
// transform of the statements ddl.ts (the migrations, schema_migrations) and the schema snapshot
// declare, so that ddl.ts stays the one source of the schema and this module only says how a
// single-server statement becomes its cluster twin.
//
// Every table `t` becomes two, both created `ON CLUSTER NAME` (so every node has them):
//
//   t_local  the data: the declared MergeTree engine made Replicated (ReplacingMergeTree(v) →
//            ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/t_local',
//            '{replica}', v)), the same columns, partitioning, sorting key, TTL and settings;
//   t        a Distributed table over t_local on NAME, sharded by cityHash64 of the rows'
//            session_id (when session_id is part of the sorting key) or else of the whole
//            sorting key.
//
// The Distributed table takes the declared name, so every insert and every query of the sink,
// the reports and the exports reads and writes through it unchanged: a row is written to the
// shard its sharding key names, whichever node the worker is connected to (the sink sets
// insert_distributed_sync = 1, so an insert is acknowledged once the shards have it, and a commit
// of Kafka offsets follows only then). Writing through Distributed rather than into the local
// tables is the choice that keeps deduplication right: ReplacingMergeTree merges copies of a row
// within one shard only, and the sharding key is a function of the sorting key (the
// deduplication key), so every copy of a row (a redelivered Kafka record, a rerun import, a
// second worker's write after a rebalance) lands on the same shard as the first; a session's
// rows share a shard, so FINAL (applied per shard) and the accounting's per-session reads are
// exact. Written locally, two workers connected to two nodes would put two copies of a
// redelivered event on two shards, which no merge ever joins.
//
// ALTER statements: column changes go to both tables (a Distributed table must list the
// columns it forwards), anything else (settings, TTL, mutations) to t_local only. INSERT ...
// SELECT (a data migration) runs unchanged through the Distributed tables. Statements of any
// other shape are refused (ClusterDdlError): a migration that needs one says so in the golden
// test (test/sink/cluster-ddl.test.ts) before it reaches a cluster. Table rebuilds (a new
// sorting key, TableRebuild) are refused too: a cluster database is created from the schema
// snapshot of this version, so the rebuilds of older migrations never run on one.
//
// Not tested on a real cluster here (the test server is one node without ZooKeeper/Keeper,
// which ON CLUSTER and Replicated tables need): the golden file holds the DDL.

/** A statement this module cannot carry to a cluster. */
export class ClusterDdlError extends Error {
  override readonly name = 'ClusterDdlError';
}

/** The suffix of the replicated table that holds a Distributed table's rows. */
export const LOCAL_SUFFIX = '_local';

/** The name of the replicated table holding the rows of a declared table. */
export function localTable(table: string): string {
  return `${table}${LOCAL_SUFFIX}`;
}

/** A cluster name as it may appear in DDL: letters, digits, `_`, `-`, `.` (quoted with backticks). */
export function checkClusterName(name: string): string {
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(name)) throw new ClusterDdlError(`a cluster name is letters, digits, '_', '-' and '.', got ${JSON.stringify(name)}`);
  return name;
}

const quote = (name: string): string => `\`${name}\``;

/** The index of the parenthesis closing the one at `open` (quotes and backticks skipped). */
function closing(sql: string, open: number): number {
  let depth = 0;
  for (let i = open; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'" || c === '`' || c === '"') {
      for (i++; i < sql.length && sql[i] !== c; i++) if (sql[i] === '\\') i++;
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  throw new ClusterDdlError(`unbalanced parentheses in ${sql.slice(0, 80)}…`);
}

/** Splits at top-level commas (not inside parentheses or quotes). */
function topLevelList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'" || c === '`' || c === '"') {
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === '\\') i++;
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(text.slice(start).trim());
  return out.filter((s) => s !== '');
}

/** The columns of the sorting key in the text after ENGINE (`ORDER BY (a, b)` or `ORDER BY a`). */
function sortingKey(afterEngine: string): string[] {
  const at = /\bORDER BY\s+/i.exec(afterEngine);
  if (at === null) throw new ClusterDdlError(`no ORDER BY in ${afterEngine.slice(0, 80)}…`);
  const from = at.index + at[0].length;
  if (afterEngine[from] === '(') return topLevelList(afterEngine.slice(from + 1, closing(afterEngine, from)));
  return [/^[^\s]+/.exec(afterEngine.slice(from))?.[0] ?? ''];
}

function unquoted(column: string): string {
  return column.replace(/^`|`$/g, '');
}

const CREATE = /^\s*CREATE TABLE IF NOT EXISTS\s+`?([A-Za-z_][A-Za-z0-9_]*)`?\s*\(/i;
const ENGINE = /^\s*ENGINE\s*=\s*([A-Za-z]*MergeTree)\b/;
const ALTER = /^\s*ALTER TABLE\s+`?([A-Za-z_][A-Za-z0-9_]*)`?\s+/i;
const INSERT_SELECT = /^\s*INSERT INTO\s+`?([A-Za-z_][A-Za-z0-9_]*)`?[\s(][\s\S]*\bSELECT\b/i;
/** ALTER commands that change the column list (a Distributed table must follow them). */
const COLUMN_COMMAND = /^(ADD|DROP|MODIFY|RENAME|COMMENT)\s+COLUMN\b/i;

function createStatements(sql: string, table: string, cluster: string): string[] {
  const head = CREATE.exec(sql) as RegExpExecArray;
  const open = head[0].length - 1;
  const close = closing(sql, open);
  const columns = sql.slice(open, close + 1);
  const rest = sql.slice(close + 1);
  const engine = ENGINE.exec(rest);
  if (engine === null) throw new ClusterDdlError(`${table}: only MergeTree-family engines can be replicated, got ${rest.trim().slice(0, 60)}…`);
  const family = engine[1] as string;
  const afterName = rest.slice(engine[0].length);
  // The engine's own arguments (ReplacingMergeTree(version)) follow the two the replication takes.
  let args = '';
  let tail = afterName;
  if (afterName.startsWith('(')) {
    const end = closing(afterName, 0);
    args = afterName.slice(1, end).trim();
    tail = afterName.slice(end + 1);
  }
  const local = localTable(table);
  const path = `'/clickhouse/tables/{shard}/{database}/${local}'`;
  const replicated = `ENGINE = Replicated${family}(${[path, "'{replica}'", ...(args === '' ? [] : [args])].join(', ')})`;
  const key = sortingKey(tail).map(unquoted);
  const shardBy = key.includes('session_id') ? 'cityHash64(session_id)' : `cityHash64(${key.join(', ')})`;
  return [
    `CREATE TABLE IF NOT EXISTS ${local} ON CLUSTER ${quote(cluster)} ${columns} ${replicated}${tail}`,
    `CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER ${quote(cluster)} AS ${local} ENGINE = Distributed(${quote(cluster)}, currentDatabase(), ${local}, ${shardBy})`,
  ];
}

function alterStatements(sql: string, table: string, cluster: string): string[] {
  const head = ALTER.exec(sql) as RegExpExecArray;
  const commands = sql.slice(head[0].length);
  const parts = topLevelList(commands);
  const columnChanges = parts.filter((p) => COLUMN_COMMAND.test(p));
  if (columnChanges.length > 0 && columnChanges.length < parts.length) {
    throw new ClusterDdlError(`ALTER TABLE ${table} mixes column changes with other commands: write them as two statements`);
  }
  const on = (name: string): string => `ALTER TABLE ${name} ON CLUSTER ${quote(cluster)} ${commands}`;
  return columnChanges.length > 0 ? [on(localTable(table)), on(table)] : [on(localTable(table))];
}

/**
 * The statements that do on cluster `cluster` what `statement` does on one server (in order).
 * Throws ClusterDdlError for a statement of a shape it does not know.
 */
export function clusterStatements(statement: string, cluster: string): string[] {
  checkClusterName(cluster);
  const create = CREATE.exec(statement);
  if (create !== null) return createStatements(statement, create[1] as string, cluster);
  const alter = ALTER.exec(statement);
  if (alter !== null) return alterStatements(statement, alter[1] as string, cluster);
  if (INSERT_SELECT.test(statement)) return [statement];
  throw new ClusterDdlError(`no cluster form for the statement ${statement.trim().slice(0, 80)}…`);
}

/** `CREATE DATABASE` on every node of the cluster. */
export function clusterCreateDatabase(database: string, cluster: string): string {
  return `CREATE DATABASE IF NOT EXISTS \`${database.replace(/`/g, '``')}\` ON CLUSTER ${quote(checkClusterName(cluster))}`;
}

/**
 * The query settings of a sink writing to a cluster: an insert into a Distributed table returns
 * once every shard has its rows (not when they are queued on the node), so the offsets committed
 * after it are of stored rows.
 */
export const CLUSTER_QUERY_SETTINGS = { insert_distributed_sync: 1 } as const;
