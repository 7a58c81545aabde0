// The reports as declarations: the dispatch, both help texts and the README's command table
// follow the REPORTS list, and every declared report runs against real replayed data.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkGrouping, findReport, REPORTS, reportsHelp } from '../../src/cli/report-commands.ts';
import { UsageError } from '../../src/cli/io.ts';
import { makeTempDir } from '../helpers/db.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('report-commands');
afterAll(() => tmp.cleanup());

function toolcanon(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args], { cwd: tmp.dir, encoding: 'utf8', env: { ...process.env, TOOLCANON_DB: join(tmp.dir, 'db') } });
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

describe('every declared report', () => {
  beforeAll(() => {
    const r = toolcanon(['replay', join(ROOT, 'fixtures')]);
    expect(r.code, r.stderr).toBe(0);
  });

  it.each(REPORTS.map((r) => r.name))('report %s runs on the replayed fixtures', (name) => {
    const args = ['report', name, '--format', 'json'];
    if (name === 'html') args.push('--out', join(tmp.dir, 'page.html'));
    const r = toolcanon(args);
    expect(r.code, r.stderr).toBe(0);
    if (name === 'html') {
      expect(existsSync(join(tmp.dir, 'page.html'))).toBe(true);
      return;
    }
    const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.length).toBeGreaterThan(0);
  });

  it('a report given an argument or a --by it does not take exits 2 naming it', () => {
    const extra = toolcanon(['report', 'breaches', 'extra']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('report breaches takes no argument, got "extra"');
    const by = toolcanon(['report', 'drift', '--by', 'model']);
    expect(by.code).toBe(2);
    expect(by.stderr).toContain('report drift takes no --by');
  });
});
