// A fresh embedded ClickHouse data directory per test file (chdb: one per process).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';

/**
 * Removes a data directory an engine is still writing into (a fault test's "removed while in
 * use"). The engine keeps creating parts while the tree is removed, so one rmSync can meet a
 * directory that filled again (ENOTEMPTY); removal is repeated until the directory is gone,
 * for up to 60 s (a loaded machine keeps the engine busy for seconds).
 */
export function removeWhileInUse(dir: string): void {
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY' || Date.now() > until) throw error;
    }
  }
}

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
