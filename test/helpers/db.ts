// A fresh embedded ClickHouse data directory per test file (chdb: one per process).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';

export function makeTempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `toolcanon-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }) };
}

export async function openTempSink(prefix: string): Promise<{ sink: ClickHouseSink; dir: string; cleanup: () => Promise<void> }> {
  const tmp = makeTempDir(prefix);
  const sink = await ClickHouseSink.open({ db: join(tmp.dir, 'db') });
  return {
    sink,
    dir: tmp.dir,
    cleanup: async () => {
      await sink.close();
      tmp.cleanup();
    },
  };
}

export async function countOf(sink: ClickHouseSink, sql: string): Promise<number> {
  const rows = await sink.queryRows<{ n: string | number }>(sql);
  return Number(rows[0]?.n ?? NaN);
}
