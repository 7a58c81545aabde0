// An import that finds nothing new answers from the copy of the import state kept in the data
// directory, without starting the engine (src/pipeline/import-mirror.ts): the same summary as the
// usual way; any new or grown file, a changed import_files or SQL run through `toolcanon query`
// sends it the usual way again.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';
import { ClickHouseSink } from '../../src/sink/clickhouse.ts';
import { MIRROR_DIR, importFilesStamp, unchangedSinceMirror, writeImportMirror } from '../../src/pipeline/import-mirror.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('import-mirror');
afterAll(() => tmp.cleanup());

const LOGS = join(tmp.dir, 'logs');
mkdirSync(LOGS);
const FILE = join(LOGS, 'a.jsonl');
copyFileSync(join(ROOT, 'test/importers/fixtures-claude-code/tool-search.jsonl'), FILE);
const DB = join(tmp.dir, 'db');
const ENV: NodeJS.ProcessEnv = { PATH: process.env['PATH'], HOME: tmp.dir, TOOLCANON_HOST: 'box', TOOLCANON_DEVICE_ID: 'dev-1' };

function toolcanon(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args], { cwd: tmp.dir, encoding: 'utf8', env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const importAgain = (): ReturnType<typeof toolcanon> => toolcanon(['import', 'claude-code', LOGS, '--db', DB, '--format', 'json']);
/** The summary without its timings. */
const stable = (stdout: string): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const line of stdout.trim().split('\n')) {
    const r = JSON.parse(line) as { metric: string; value: unknown };
    if (!['elapsed_ms', 'events_per_s', 'mb_per_s'].includes(r.metric)) out[r.metric] = r.value;
  }
  return out;
};
const mirrors = (): string[] => (existsSync(join(DB, MIRROR_DIR)) ? readdirSync(join(DB, MIRROR_DIR)) : []);

/** Another process holding the data directory's engine (its lock), until stopped. */
async function holdEngine(dir: string): Promise<ChildProcess> {
  const chdb = createRequire(import.meta.url).resolve('chdb');
  const child = spawn(process.execPath, ['-e', `const { Session } = require(${JSON.stringify(chdb)}); new Session(${JSON.stringify(dir)}); console.log('held'); setInterval(() => {}, 1000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('held')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`the engine holder exited (${code})`)));
  });
  return child;
}

describe('import: nothing new, answered from the copy of the import state', () => {
  let usual: Record<string, unknown>;

  it('the first import reads the file and keeps a copy of the state it recorded', () => {
    const first = toolcanon(['import', 'claude-code', LOGS, '--db', DB, '--format', 'json']);
    expect(first.code, first.stderr).toBe(0);
    expect(stable(first.stdout)['files_read']).toBe(1);
    expect(mirrors()).toHaveLength(1);
  });

  it('without the copy, an import again takes the usual way and writes the copy again', () => {
    rmSync(join(DB, MIRROR_DIR), { recursive: true });
    const again = importAgain();
    expect(again.code, again.stderr).toBe(0);
    usual = stable(again.stdout);
    expect(usual['files_unchanged']).toBe(1);
    expect(usual['files_read']).toBe(0);
    expect(mirrors()).toHaveLength(1);
  });

  it('with it: the same summary and the same line, without starting the engine (another process holds it)', async () => {
    const holder = await holdEngine(DB);
    try {
      const fast = importAgain();
      expect(fast.code, fast.stderr).toBe(0);
      expect(stable(fast.stdout)).toEqual(usual);
      expect(fast.stderr).toContain(`Importing claude-code logs from ${LOGS} into embedded ClickHouse at ${DB}`);
      // A grown file needs the engine: the usual way, refused while another process holds it.
      appendFileSync(FILE, '\n');
      const grown = importAgain();
      expect(grown.code).not.toBe(0);
      expect(grown.stderr).toMatch(/in use|another process|lock/i);
    } finally {
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
    }
  });

  it('a grown, touched or new file is read the usual way', () => {
    const grown = importAgain();
    expect(grown.code, grown.stderr).toBe(0);
    expect(stable(grown.stdout)['files_read']).toBe(1);
    expect(stable(importAgain().stdout)['files_read']).toBe(0);
    const later = new Date(statSync(FILE).mtimeMs + 5000);
    utimesSync(FILE, later, later);
    expect(stable(importAgain().stdout)['files_read']).toBe(1);
    copyFileSync(FILE, join(LOGS, 'b.jsonl'));
    const added = stable(importAgain().stdout);
    expect(added['files_read']).toBe(1);
    expect(added['files_unchanged']).toBe(1);
    expect(stable(importAgain().stdout)['files_unchanged']).toBe(2);
  });

  it('`toolcanon query` (SQL it did not write) removes the copies first', () => {
    expect(mirrors()).toHaveLength(1);
    const q = toolcanon(['query', 'SELECT count() AS n FROM import_files', '--db', DB, '--format', 'csv']);
    expect(q.code, q.stderr).toBe(0);
    expect(mirrors()).toHaveLength(0);
  });
});

describe('import all: nothing new in any harness, answered from the copies', () => {
  it('the second run prints the same rows while another process holds the engine', async () => {
    const home = join(tmp.dir, 'home-all');
    const projects = join(home, '.claude', 'projects', 'p');
    mkdirSync(projects, { recursive: true });
    copyFileSync(join(ROOT, 'test/importers/fixtures-claude-code/tool-search.jsonl'), join(projects, 's.jsonl'));
    const db = join(tmp.dir, 'db-all');
    const env: NodeJS.ProcessEnv = { ...ENV, HOME: home };
    const all = (): ReturnType<typeof toolcanon> => {
      const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), 'import', 'all', '--db', db, '--format', 'json'], { cwd: tmp.dir, encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const rows = (stdout: string): string[] => stdout.trim().split('\n').filter((l) => !/"metric":"(elapsed_ms|events_per_s|mb_per_s)"/.test(l));
    const first = all();
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('"importer":"claude-code","metric":"files_read","value":1');
    const usual = all();
    expect(usual.code, usual.stderr).toBe(0);
    const holder = await holdEngine(db);
    try {
      const fast = all();
      expect(fast.code, fast.stderr).toBe(0);
      expect(rows(fast.stdout)).toEqual(rows(usual.stdout));
      expect(fast.stdout).toContain('"importer":"claude-code","metric":"files_unchanged","value":1');
    } finally {
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
    }
  });
});

describe('the copy holds only while import_files only grew', () => {
  it('a merge keeps it; a new record, a DELETE or a TRUNCATE ends it', async () => {
    const dir = join(tmp.dir, 'db-stamp');
    const file = join(tmp.dir, 'f.jsonl');
    writeFileSync(file, '{}\n');
    const s = statSync(file);
    const sink = await ClickHouseSink.open({ db: dir });
    try {
      const record = new Map([[file, { sizeBytes: s.size, mtimeMs: s.mtimeMs, completeBytes: s.size }]]);
      await sink.writeImportState('codex', record, '2026-12-07 00:00:00.000', 'd');
      await sink.writeImportState('codex', record, '2026-12-07 00:00:01.000', 'd');
      const keep = async (): Promise<void> => writeImportMirror(dir, 'codex', 'd', await sink.loadImportState('codex', 'd'));
      await keep();
      expect(importFilesStamp(dir)?.blocks).toEqual([[1, 2]]);
      expect(unchangedSinceMirror(dir, 'codex', 'd', [file])).toBe(true);
      // Another machine's copy, another importer: not this one's.
      expect(unchangedSinceMirror(dir, 'codex', 'e', [file])).toBe(false);
      expect(unchangedSinceMirror(dir, 'claude-code', 'd', [file])).toBe(false);
      expect(unchangedSinceMirror(dir, 'codex', 'd', [])).toBe(false);

      await sink.queryRows('OPTIMIZE TABLE import_files FINAL');
      expect(importFilesStamp(dir)?.blocks).toEqual([[1, 2]]);
      expect(unchangedSinceMirror(dir, 'codex', 'd', [file])).toBe(true);

      await sink.writeImportState('claude-code', record, '2026-12-07 00:00:02.000', 'd');
      expect(unchangedSinceMirror(dir, 'codex', 'd', [file])).toBe(false);
      await keep();
      expect(unchangedSinceMirror(dir, 'codex', 'd', [file])).toBe(true);

      await sink.queryRows("ALTER TABLE import_files DELETE WHERE importer = 'claude-code' SETTINGS mutations_sync = 1");
      expect(importFilesStamp(dir)?.mutations.length).toBeGreaterThan(0);
      expect(unchangedSinceMirror(dir, 'codex', 'd', [file])).toBe(false);
      await keep();
      expect(unchangedSinceMirror(dir, 'codex', 'd', [file])).toBe(true);

      await sink.queryRows('TRUNCATE TABLE import_files');
      expect(unchangedSinceMirror(dir, 'codex', 'd', [file])).toBe(false);
      // What the database now says (nothing read) is what the copy says.
      await keep();
      expect(unchangedSinceMirror(dir, 'codex', 'd', [file])).toBe(false);
    } finally {
      await sink.close();
    }
  });

  it('a folder it does not know (no table, a part being written) is no stamp', () => {
    expect(importFilesStamp(join(tmp.dir, 'nowhere'))).toBeUndefined();
    const dir = join(tmp.dir, 'fake');
    const table = join(dir, 'data', 'default', 'import_files');
    mkdirSync(join(table, 'all_1_1_0'), { recursive: true });
    expect(importFilesStamp(dir)).toEqual({ table, blocks: [[1, 1]], mutations: [] });
    mkdirSync(join(table, 'tmp_insert_all_2_2_0'));
    expect(importFilesStamp(dir)).toBeUndefined();
  });
});
