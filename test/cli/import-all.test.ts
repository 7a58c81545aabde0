// `toolcanon import all`: every harness whose default location exists, in one process and one
// engine, each importer's summary as it would print alone; on both engines with the same
// assertions (test/helpers/engines.ts: embedded chdb and a ClickHouse server).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/db.ts';
import { forEachEngine } from '../helpers/engines.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('import-all');
afterAll(() => tmp.cleanup());

const HOME = join(tmp.dir, 'home');
mkdirSync(HOME);
// Harnesses without a folder override of their own (VS Code extensions) are found where they write: under HOME.
const LOGS_HOME = join(tmp.dir, 'logs-home');
cpSync(join(ROOT, 'test/importers/fixtures-cline/Code'), join(LOGS_HOME, '.config/Code'), { recursive: true });
cpSync(join(ROOT, 'test/importers/fixtures-cline/dot-cline'), join(LOGS_HOME, '.cline'), { recursive: true });
cpSync(join(ROOT, 'test/importers/fixtures-roo-code/Code'), join(LOGS_HOME, '.config/Code'), { recursive: true });
cpSync(join(ROOT, 'test/importers/fixtures-kilo-code/Code'), join(LOGS_HOME, '.config/Code'), { recursive: true });
// Kimi Code and Kimi CLI, Amp (XDG data folder and the editor's globalStorage), Droid, Goose and Hermes: their home folders.
cpSync(join(ROOT, 'test/importers/fixtures-kimi/kimi-code'), join(LOGS_HOME, '.kimi-code'), { recursive: true });
cpSync(join(ROOT, 'test/importers/fixtures-kimi/kimi-legacy'), join(LOGS_HOME, '.kimi'), { recursive: true });
cpSync(join(ROOT, 'test/importers/fixtures-amp/dot-local-share/amp'), join(LOGS_HOME, '.local/share/amp'), { recursive: true });
cpSync(join(ROOT, 'test/importers/fixtures-amp/Code'), join(LOGS_HOME, '.config/Code'), { recursive: true });
cpSync(join(ROOT, 'test/importers/fixtures-droid/sessions'), join(LOGS_HOME, '.factory/sessions'), { recursive: true });
cpSync(join(ROOT, 'test/importers/fixtures-goose/goose'), join(LOGS_HOME, '.local/share/goose'), { recursive: true });
cpSync(join(ROOT, 'test/importers/fixtures-hermes-agent/dot-hermes'), join(LOGS_HOME, '.hermes'), { recursive: true });
cpSync(join(ROOT, 'test/importers/fixtures-codebuff/manicode'), join(LOGS_HOME, '.config/manicode'), { recursive: true });
/** The importers whose fixtures WITH_LOGS makes their default folders hold, in registry order (Aider: $AIDER_DIR, it has no folder of its own). */
const FOUND = ['qwen-code', 'copilot-cli', 'pi-agent', 'openclaw', 'cline', 'roo-code', 'kilo-code', 'kimi', 'amp', 'droid', 'goose', 'hermes-agent', 'aider', 'codebuff'];
// Only what the test names: no harness's real folders, no overrides from the machine.
const ENV: NodeJS.ProcessEnv = { PATH: process.env['PATH'], HOME, TOOLCANON_HOST: 'box', TOOLCANON_DEVICE_ID: 'dev-1' };
const WITH_LOGS = { ...ENV, HOME: LOGS_HOME, QWEN_RUNTIME_DIR: join(ROOT, 'test/importers/fixtures-qwen-code'), COPILOT_CONFIG_DIR: join(ROOT, 'test/importers/fixtures-copilot-cli'), PI_CODING_AGENT_DIR: join(ROOT, 'test/importers/fixtures-pi-agent'), OPENCLAW_STATE_DIR: join(ROOT, 'test/importers/fixtures-openclaw'), AIDER_DIR: join(ROOT, 'test/importers/fixtures-aider/projects') };

function toolcanon(args: string[], env: NodeJS.ProcessEnv): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args], { cwd: tmp.dir, encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const metrics = (stdout: string): Record<string, Record<string, unknown>> => {
  const out: Record<string, Record<string, unknown>> = {};
  for (const line of stdout.trim().split('\n')) {
    const r = JSON.parse(line) as { importer?: string; metric: string; value: unknown };
    (out[r.importer ?? ''] ??= {})[r.metric] = r.value;
  }
  return out;
};
const stable = (m: Record<string, unknown> = {}): Record<string, unknown> => {
  const { elapsed_ms: _e, events_per_s: _r, mb_per_s: _m, ...rest } = m;
  return rest;
};
/** A query's CSV; asked once more when a process gave no output (under load, an engine start can fail once). */
const count = (db: readonly string[], sql: string): string => {
  const once = (): ReturnType<typeof toolcanon> => toolcanon(['query', sql, ...db, '--format', 'csv'], ENV);
  const first = once();
  return first.code === 0 && first.stdout.trim() !== '' ? first.stdout : once().stdout;
};

await forEachEngine('test/cli/import-all.test.ts', (engine) => describe('toolcanon import all', () => {
  it('imports every harness found in its default location into one database, as the single imports do', async () => {
    const allDb = (await engine.database('import-all')).flags;
    const oneDb = new Map<string, readonly string[]>();
    for (const id of FOUND) oneDb.set(id, (await engine.database(`import-one-${id}`)).flags);
    const all = toolcanon(['import', 'all', ...allDb, '--format', 'json'], WITH_LOGS);
    expect(all.code, all.stderr).toBe(0);
    const got = metrics(all.stdout);
    expect(Object.keys(got)).toEqual(FOUND);
    for (const id of FOUND) {
      const one = toolcanon(['import', id, ...(oneDb.get(id) ?? []), '--format', 'json'], WITH_LOGS);
      expect(one.code, one.stderr).toBe(0);
      expect(stable(got[id])).toEqual(stable(metrics(one.stdout)['']));
      expect(Number(got[id]?.['events_emitted'])).toBeGreaterThan(0);
    }
    expect(all.stderr).toContain('Importing qwen-code logs from');
    expect(all.stderr).toContain('Importing copilot-cli logs from');
    expect(all.stderr).toContain('Importing pi-agent logs from');
    for (const id of FOUND) expect(all.stderr).toContain(`Importing ${id} logs from`);
    expect(all.stderr).toContain(`Importing cline logs from ${join(LOGS_HOME, '.config/Code/User/globalStorage/saoudrizwan.claude-dev')}, ${join(LOGS_HOME, '.cline/data')}`);
    expect(all.stderr).toContain(`Importing kimi logs from ${join(LOGS_HOME, '.kimi-code/sessions')}, ${join(LOGS_HOME, '.kimi/sessions')}`);
    expect(all.stderr).toContain(`Importing amp logs from ${join(LOGS_HOME, '.local/share/amp/threads')}, ${join(LOGS_HOME, '.config/Code/User/globalStorage/sourcegraph.amp/threads3')}`);
    // Calls and observed usage per harness (Codebuff's importer reads usage only).
    const q = "SELECT harness, count() AS n FROM (SELECT harness FROM tool_calls FINAL UNION ALL SELECT harness FROM token_usage FINAL WHERE source = 'observed') GROUP BY harness ORDER BY harness";
    const separate = FOUND.map((id) => count(oneDb.get(id) ?? [], q)).map((t) => t.trim().split('\n').slice(1)).flat().sort();
    expect(separate.length).toBeGreaterThanOrEqual(FOUND.length);
    expect(count(allDb, q).trim().split('\n').slice(1).sort()).toEqual(separate);
    // Incremental as each import is: a second run reads nothing new.
    const again = metrics(toolcanon(['import', 'all', ...allDb, '--format', 'json'], WITH_LOGS).stdout);
    for (const id of FOUND) expect(again[id]).toMatchObject({ events_emitted: 0, files_read: 0 });
  }, 300_000);

  it('passes over a harness folder with no log in it, and fails only when no folder it found had any', async () => {
    const emptyQwen = join(tmp.dir, `empty-qwen-${engine.name}`);
    mkdirSync(emptyQwen);
    const some = toolcanon(['import', 'all', ...(await engine.database('import-some')).flags, '--format', 'json'], { ...ENV, QWEN_RUNTIME_DIR: emptyQwen, COPILOT_CONFIG_DIR: join(ROOT, 'test/importers/fixtures-copilot-cli') });
    expect(some.code, some.stderr).toBe(0);
    const got = metrics(some.stdout);
    expect(got['qwen-code']).toMatchObject({ files_seen: 0, events_emitted: 0 });
    expect(Number(got['copilot-cli']?.['events_emitted'])).toBeGreaterThan(0);
    const none = toolcanon(['import', 'all', ...(await engine.database('import-empty')).flags], { ...ENV, QWEN_RUNTIME_DIR: emptyQwen });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`toolcanon: import all found no log files in the folders it found (qwen-code: ${emptyQwen})`);
  }, 120_000);
}));

describe('toolcanon import all: nothing to import, usage mistakes', () => {

  it('says where it looked when no harness has logs, and refuses paths and --to-kafka', () => {
    const none = toolcanon(['import', 'all', '--db', join(tmp.dir, 'none')], ENV);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('toolcanon: import all found no harness logs in their default locations (claude-code: ');
    expect(none.stderr).toContain(`qwen-code: ${join(HOME, '.qwen')}`);
    expect(toolcanon(['import', 'all', '--db', join(tmp.dir, 'none'), '--allow-dead-letters'], ENV).code).toBe(0);
    const withPath = toolcanon(['import', 'all', 'somewhere'], ENV);
    expect(withPath.code).toBe(2);
    expect(withPath.stderr).toContain('import all takes no path');
    const kafka = toolcanon(['import', 'all', '--to-kafka', '--brokers', 'x:1', '--topic', 't'], ENV);
    expect(kafka.code).toBe(2);
    expect(kafka.stderr).toContain('import all writes to a database');
  });
});
