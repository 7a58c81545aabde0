// Runs a replay or an import with the compiled code of a build directory into a fresh embedded
// database, then prints one JSON line: how many decode threads it started, the counts, and every
// analytics table's rows (columns that hold the time of the run left out), sorted. A child
// process per run: one embedded engine per process. Used by test/pipeline/decode-thread.e2e.test.ts.
//   node pipeline-dump.mjs <build dir> <db> replay <batch rows> <paths…>
//   node pipeline-dump.mjs <build dir> <db> import <batch rows> <harness> <paths…>
const [build, db, mode, batchRows, ...rest] = process.argv.slice(2);
const { replayPaths } = await import(`${build}/pipeline/batch-writer.js`);
const { ClickHouseSink } = await import(`${build}/sink/clickhouse.js`);
const { decodeThreadsStarted } = await import(`${build}/thread/decode.js`);
const batch = { batchMaxRows: Number(batchRows), batchMaxBytes: 32 * 1024 * 1024 };

const sink = await ClickHouseSink.open({ db });
let counts;
if (mode === 'replay') counts = await replayPaths(rest, sink, { batch });
else {
  const { loadImporter } = await import(`${build}/importers/registry.js`);
  const { runImport } = await import(`${build}/pipeline/import.js`);
  const [harness, ...paths] = rest;
  const summary = await runImport(await loadImporter(harness), paths, sink, { batch });
  counts = summary.counts;
}
/** Columns whose value is the time of the run (or derived from it), not of the events. */
const VOLATILE = new Set(['ingested_at', 'computed_at', 'imported_at']);
const tables = {};
for (const { name } of await sink.queryRows("SELECT name FROM system.tables WHERE database = currentDatabase() AND name NOT IN ('schema_migrations', 'import_files') ORDER BY name")) {
  const rows = await sink.queryRows(`SELECT * FROM ${name} FINAL`);
  tables[name] = rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).filter(([k]) => !VOLATILE.has(k))))).sort();
}
await sink.close();
console.log(JSON.stringify({ threads: decodeThreadsStarted(), counts, tables }));
