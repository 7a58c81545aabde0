// The reports as declarations: the dispatch, both help texts and the README's command table
// follow the REPORTS list, and every declared report runs against real replayed data, on both
// engines (test/helpers/engines.ts: embedded chdb and a ClickHouse server).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkGrouping, findReport, REPORTS, reportsHelp } from '../../src/cli/report-commands.ts';
import { UsageError } from '../../src/cli/io.ts';
import { makeTempDir } from '../helpers/db.ts';
import { cliEnv, forEachEngine } from '../helpers/engines.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('report-commands');
afterAll(() => tmp.cleanup());

/** `toolcanon ARGS` on the database `flags` name (`--db DIR` or `--clickhouse URL`; none: no database). */
function toolcanon(args: string[], flags: readonly string[] = []): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args, ...flags], { cwd: tmp.dir, encoding: 'utf8', env: cliEnv({ TOOLCANON_DB: join(tmp.dir, 'db') }) });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('report declarations', () => {
  it('have unique names, and --by is checked against each one’s groupings', () => {
    const names = REPORTS.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    for (const r of REPORTS) {
      expect(findReport(r.name)).toBe(r);
      expect(r.help.length).toBeGreaterThan(0);
      if (r.groupings) {
        for (const g of r.groupings) expect(() => checkGrouping(r, g)).not.toThrow();
        expect(() => checkGrouping(r, 'no-such-grouping')).toThrow(UsageError);
      } else {
        expect(() => checkGrouping(r, 'model')).toThrow(`report ${r.name} takes no --by`);
      }
    }
    expect(() => findReport('nope')).toThrow(`expected ${names.slice(0, -1).join(', ')} or ${names.at(-1) ?? ''}`);
  });

  it('are each listed in the README command table, in --help and in report --help', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Commands'), readme.indexOf('\n## ', readme.indexOf('## Commands') + 1));
    const usage = toolcanon(['--help']).stdout;
    const help = toolcanon(['report', '--help']).stdout;
    expect(usage).toContain(reportsHelp('  ', 29));
    for (const r of REPORTS) {
      expect(table, `README's command table names report ${r.name}`).toMatch(new RegExp(`\`toolcanon report ${r.name}[ \`]|/ \`${r.name}\``));
      expect(usage).toContain(`  report ${r.name}`);
      expect(help).toContain(`  ${r.name}`);
      for (const line of r.help) expect(usage).toContain(line);
    }
  });
});

await forEachEngine('test/cli/report-commands.test.ts', (engine) => describe('every declared report', () => {
  let flags: readonly string[] = [];
  beforeAll(async () => {
    flags = (await engine.database('report-commands')).flags;
    const r = toolcanon(['replay', join(ROOT, 'fixtures')], flags);
    expect(r.code, r.stderr).toBe(0);
  }, 120_000);

  it.each(REPORTS.map((r) => r.name))('report %s runs on the replayed fixtures', (name) => {
    const args = ['report', name, '--format', 'json'];
    if (name === 'html') args.push('--out', join(tmp.dir, `page-${engine.name}.html`));
    const r = toolcanon(args, flags);
    expect(r.code, r.stderr).toBe(0);
    if (name === 'html') {
      expect(existsSync(join(tmp.dir, `page-${engine.name}.html`))).toBe(true);
      return;
    }
    const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.length).toBeGreaterThan(0);
  });

  it('a report given an argument or a --by it does not take exits 2 naming it', () => {
    const extra = toolcanon(['report', 'breaches', 'extra'], flags);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('report breaches takes no argument, got "extra"');
    const by = toolcanon(['report', 'drift', '--by', 'model'], flags);
    expect(by.code).toBe(2);
    expect(by.stderr).toContain('report drift takes no --by');
  });
}));
