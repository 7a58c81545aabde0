// The HTML report's "What tools cost before they are called" table (issue 35) in headless Chromium:
// the session of test/mcp/fixtures-definitions (two tools visible, one disabled mid-session) gives
// a page with no request and no console error whose table lists the costliest tools with the
// figures of `report discovery --by tool --format json` (hand-computed in
// test/mcp/definitions.e2e.test.ts), and fits its card at 1400 and 390 px. On both engines with the
// same assertions (test/helpers/engines.ts: embedded chdb and a ClickHouse server).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumOrSkip } from '../helpers/browser.ts';
import { makeTempDir } from '../helpers/db.ts';
import { cliEnv, forEachEngine } from '../helpers/engines.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const FIXTURE = join(ROOT, 'test/mcp/fixtures-definitions/session.jsonl');
const tmp = makeTempDir('html-definitions');
const executablePath = chromiumOrSkip('test/report/definitions.browser.test.ts (report html in Chromium)');
afterAll(() => tmp.cleanup());

/** The database of the engine under test (set in its beforeAll): `--db DIR` or `--clickhouse URL`. */
let dbFlags: readonly string[] = [];

function toolcanon(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args, ...dbFlags], { cwd: tmp.dir, encoding: 'utf8', env: cliEnv() });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

await forEachEngine('test/report/definitions.browser.test.ts', (engine) => describe.skipIf(executablePath === null)('the definition costs in the HTML report', () => {
  let browser: Browser;
  const prices = join(tmp.dir, 'prices.json');
  const page = join(tmp.dir, `report-${engine.name}.html`);

  beforeAll(async () => {
    dbFlags = (await engine.database('html-definitions')).flags;
    expect(toolcanon(['replay', FIXTURE]).code).toBe(0);
    writeFileSync(prices, JSON.stringify({ 'grok-4': { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15 } }));
    const r = toolcanon(['report', 'html', '--out', page, '--prices', prices]);
    expect(r.code, r.stderr).toBe(0);
    browser = await chromium.launch({ executablePath: executablePath as string, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
  });

  for (const width of [1400, 390]) {
    it(`lists the costliest tools with the CLI's figures, fitting its card at ${width} px`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const p = await context.newPage();
      const errors: string[] = [];
      const blocked: string[] = [];
      p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
      p.on('pageerror', (e) => errors.push(String(e)));
      await context.route('**/*', async (route) => {
        if (route.request().url() === `file://${page}`) return route.continue();
        blocked.push(route.request().url());
        return route.abort();
      });
      await p.goto(`file://${page}`);
      await p.waitForSelector('html[data-ready="true"]', { timeout: 20_000 });
      expect(errors).toEqual([]);
      expect(blocked).toEqual([]);
      expect(await p.isVisible('#definitions-card')).toBe(true);
      const shown = await p.$$eval('#definitions-table tbody tr', (trs) => trs.map((tr) => Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.getAttribute('data-label'), td.getAttribute('data-value')]))));
      const cli = toolcanon(['report', 'discovery', '--by', 'tool', '--format', 'json', '--prices', prices]);
      expect(cli.code, cli.stderr).toBe(0);
      const rows = cli.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => Number(r['definition_tokens_total']) > 0);
      const expected = rows
        .sort((a, b) => Number(b['definition_tokens_total']) - Number(a['definition_tokens_total']))
        .map((r) => ({
          tool: String(r['tool']), 'tokens per request': String(r['definition_tokens']), 'requests while visible': String(r['requests_while_visible']),
          'tokens in all': String(r['definition_tokens_total']), cost: String(r['definition_cost_usd']), calls: String(r['calls']), advice: String(r['advice']),
        }));
      expect(shown).toEqual(expected);
      // By hand (test/mcp/definitions.e2e.test.ts): search_docs 4 × 63 tokens, $0.000605; get_page 3 × 54, $0.000194; wiki lookup 2 × 13, $0.000078.
      expect(shown.map((r) => [r['tool'], r['tokens in all'], r['cost'], r['advice']])).toEqual([
        ['docs__search_docs', '252', '0.000605', 'keep inline'],
        ['docs__get_page', '162', '0.000194', 'make discoverable'],
        ['wiki__lookup', '26', '0.000078', 'make discoverable'],
      ]);
      const overflow = await p.$eval('#definitions-card', (card) => [card, ...card.querySelectorAll('table, .table-wrap')].filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.tagName));
      expect(overflow).toEqual([]);
      await context.close();
    });
  }
}));
