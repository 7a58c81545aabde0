// `toolcanon report html` in a real headless Chromium (Debian's chromium through playwright-core):
// the page made from the replayed fixtures loads from disk with no network request (every request
// is blocked and counted) and no console error, every chart drew, the headline figures equal the
// CLI's --format json figures for the same database, and the sessions table sorts on click. On both
// engines with the same assertions (test/helpers/engines.ts: the page made from an embedded
// database and from a ClickHouse server's).
// UPDATE_SCREENSHOTS=1 writes docs/report-html.png and docs/report-html-dark.png.
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumOrSkip } from '../helpers/browser.ts';
import { makeTempDir } from '../helpers/db.ts';
import { cliEnv, forEachEngine } from '../helpers/engines.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('html');
const executablePath = chromiumOrSkip('test/report/html.browser.test.ts (report html in Chromium)');
afterAll(() => tmp.cleanup());

/** The database of the engine under test (set in its beforeAll): `--db DIR` or `--clickhouse URL`. */
let dbFlags: readonly string[] = [];

function toolcanon(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args, ...dbFlags], { cwd: tmp.dir, encoding: 'utf8', env: cliEnv() });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
function cliRows(args: string[]): Record<string, unknown>[] {
  const r = toolcanon([...args, '--format', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim() === '' ? [] : r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}
const sum = (rows: Record<string, unknown>[], col: string): number => rows.reduce((n, r) => n + Number(r[col] ?? 0), 0);
function micro(v: unknown): bigint {
  const [whole = '0', frac = ''] = String(v).split('.');
  return BigInt(whole) * 1_000_000n + BigInt((frac + '000000').slice(0, 6));
}

interface Loaded {
  page: Page;
  consoleErrors: string[];
  blocked: string[];
}

await forEachEngine('test/report/html.browser.test.ts', (engine) => describe.skipIf(executablePath === null)('report html in headless Chromium', () => {
  let browser: Browser;
  const pricesFile = join(tmp.dir, 'grok-price.json');
  const plain = join(tmp.dir, `report-${engine.name}.html`);
  const priced = join(tmp.dir, `report-priced-${engine.name}.html`);

  beforeAll(async () => {
    dbFlags = (await engine.database('html')).flags;
    const replay = toolcanon(['replay', join(ROOT, 'fixtures'), '--format', 'json']);
    expect(replay.code, replay.stderr).toBe(0);
    // The fixtures' only usage is grok-4, which has no shipped price: one page as shipped (cost
    // unknown), one with a test price so that every chart, cost per day included, has data.
    writeFileSync(pricesFile, JSON.stringify({ 'grok-4': { input: 3, cache_read: 0.75, cache_write: 3, output: 15, note: 'a test price' } }));
    for (const [out, extra] of [[plain, []], [priced, ['--prices', pricesFile]]] as const) {
      const r = toolcanon(['report', 'html', '--out', out, ...extra]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^Wrote .* \(\d+ KiB\)/);
    }
    browser = await chromium.launch({ executablePath: executablePath as string, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function load(file: string, options: { colorScheme?: 'light' | 'dark'; width?: number } = {}): Promise<Loaded> {
    const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 }, colorScheme: options.colorScheme ?? 'light' });
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    const blocked: string[] = [];
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (url === `file://${file}`) return route.continue();
      blocked.push(url);
      return route.abort();
    });
    await page.goto(`file://${file}`);
    await page.waitForSelector('html[data-ready="true"]', { timeout: 20_000 });
    return { page, consoleErrors, blocked };
  }

  /** Per chart figure: drawn pixels of its canvas (0 without one) and whether it shows an empty state. */
  function chartStates(page: Page): Promise<{ name: string; pixels: number; empty: boolean }[]> {
    return page.$$eval('[data-chart]', (figures) => figures.map((f) => {
      const canvas = f.querySelector('canvas');
      let pixels = 0;
      if (canvas) {
        const d = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
        for (let i = 3; i < d.length; i += 4) if (d[i]! > 0) pixels++;
      }
      return { name: f.getAttribute('data-chart') ?? '', pixels, empty: f.querySelector('[data-empty]') !== null };
    }));
  }

  it('is one self-contained file: no request, no console error, every chart drew', async () => {
    const html = readFileSync(priced, 'utf8');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|@import|url\(http/i);
    const { page, consoleErrors, blocked } = await load(priced);
    expect(blocked).toEqual([]);
    expect(consoleErrors).toEqual([]);
    const charts = await chartStates(page);
    expect(charts.map((c) => c.name)).toEqual(expect.arrayContaining(['tokens-per-day', 'cost-per-day', 'namespace-kind', 'top-tools', 'error-share', 'mcp-servers', 'discovery', 'drift', 'context-0']));
    for (const c of charts) {
      expect(c.empty, c.name).toBe(false);
      expect(c.pixels, c.name).toBeGreaterThan(1_000);
    }
    // The compaction session crossed twice: it is drawn first, with its two breaches.
    expect(await page.textContent('[data-chart="context-0"] figcaption')).toMatch(/grok_build · grok-4.*2 breaches/);
  });

  it('headline figures equal the CLI --format json figures of the same database', async () => {
    const { page } = await load(priced);
    const shown = Object.fromEntries(await page.$$eval('[data-metric]', (els) => els.map((e) => [e.getAttribute('data-metric'), e.getAttribute('data-value')])));
    const tools = cliRows(['report', 'tools']);
    const usage = cliRows(['report', 'usage']);
    const byModel = cliRows(['report', 'usage', '--by', 'model', '--prices', pricesFile]);
    expect(shown).toEqual({
      sessions: String(cliRows(['report', 'usage', '--by', 'session']).length),
      tool_calls: String(sum(tools, 'calls')),
      errors: String(sum(tools, 'errors')),
      input_tokens: String(sum(usage, 'input_tokens')),
      cache_read_tokens: String(sum(usage, 'cache_read_tokens')),
      cache_write_tokens: String(sum(usage, 'cache_write_tokens')),
      output_tokens: String(sum(usage, 'output_tokens')),
      reasoning_tokens: String(sum(usage, 'reasoning_tokens')),
      cost_usd: expect.stringMatching(/^\d+\.\d{6}$/),
      breaches: String(cliRows(['report', 'breaches']).length),
      dead_letters: String(sum(cliRows(['report', 'dead-letters']), 'dead_letters')),
    });
    expect(micro(shown['cost_usd'])).toBe(byModel.reduce((n, r) => n + micro(r['cost_usd']), 0n));
    // By hand: 314,000 input tokens at $3/M and 4,499 output tokens at $15/M.
    expect(shown['cost_usd']).toBe('1.009485');
    expect(shown).toMatchObject({ tool_calls: '373', breaches: '2', dead_letters: '28', input_tokens: '314000' }); // 21 of the calls from fixtures/gemini_cli, 19 from fixtures/qwen_code, 18 from fixtures/copilot_cli, 7 from fixtures/pi_agent, 3 from fixtures/openclaw
  });

  it('the sessions table sorts when a column header is clicked', async () => {
    const { page } = await load(priced);
    const column = async (key: string): Promise<string[]> => {
      const index = await page.$$eval('#sessions thead th', (ths, k) => ths.findIndex((th) => th.getAttribute('data-key') === k), key);
      return page.$$eval('#sessions tbody tr', (rows, i) => rows.map((r) => r.querySelectorAll('td')[i]!.getAttribute('data-value') ?? ''), index);
    };
    const calls = (await column('calls')).map(Number);
    expect(calls.length).toBeGreaterThan(20);
    await page.click('#sessions th[data-key="calls"] button');
    expect((await column('calls')).map(Number)).toEqual([...calls].sort((a, b) => b - a));
    expect(await page.getAttribute('#sessions th[data-key="calls"]', 'aria-sort')).toBe('descending');
    await page.click('#sessions th[data-key="calls"] button');
    expect((await column('calls')).map(Number)).toEqual([...calls].sort((a, b) => a - b));
    await page.click('#sessions th[data-key="harness"] button');
    const harnesses = await column('harness');
    expect(harnesses).toEqual([...harnesses].sort((a, b) => a.localeCompare(b)));
  });

  it('without a price the cost is unknown and says why, never $0; light, dark and phone widths render', async () => {
    const { page, consoleErrors, blocked } = await load(plain);
    expect(blocked).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(await page.getAttribute('[data-metric="cost_usd"]', 'data-value')).toBe('');
    expect(await page.textContent('[data-metric="cost_usd"]')).toBe('unknown');
    expect(await page.textContent('#cost-note')).toContain('no price for grok-4 (5 requests)');
    const charts = await chartStates(page);
    expect(charts.filter((c) => c.empty).map((c) => c.name)).toEqual(['cost-per-day']);
    expect(await page.textContent('[data-chart="cost-per-day"]')).toContain('No priced usage: no price for grok-4 (5 requests)');
    expect(await page.textContent('#sessions')).toContain('unknown');
    // An unknown cost sorts last, whichever way the column is sorted.
    const costs = (): Promise<string[]> => page.$$eval('#sessions tbody tr', (rows) => rows.map((r) => r.querySelector('td:nth-child(10)')!.getAttribute('data-value') ?? ''));
    for (let i = 0; i < 2; i++) {
      await page.click('#sessions th[data-key="cost_usd"] button');
      const c = await costs();
      expect(c.indexOf('')).toBe(c.length - 1);
    }

    // The layout at these widths is checked box by box in html.layout.browser.test.ts.
    const shots: [string, 'light' | 'dark', number][] = [['report-html.png', 'light', 1400], ['report-html-dark.png', 'dark', 1400], ['report-html-phone.png', 'dark', 390]];
    for (const [name, colorScheme, width] of shots) {
      const view = await load(plain, { colorScheme, width });
      expect(view.consoleErrors).toEqual([]);
      // Nothing wider than the viewport: the page reads on a phone without sideways scrolling.
      expect(Number(await view.page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(width);
      const out = join(tmp.dir, `${engine.name}-${name}`);
      // The page down to the end of the context charts (the phone: its first 1800 px), taken with
      // the viewport as tall as the page so that no chart is resized while it is captured.
      const height = width > 600 ? Math.ceil(Number(await view.page.evaluate("document.getElementById('h-drift').getBoundingClientRect().top + window.scrollY - 16"))) : 1800;
      await view.page.setViewportSize({ width, height: Number(await view.page.evaluate('document.documentElement.scrollHeight')) });
      await view.page.waitForTimeout(300);
      await view.page.screenshot({ path: out, clip: { x: 0, y: 0, width, height } });
      if (process.env['UPDATE_SCREENSHOTS'] === '1' && width > 600 && engine.name === 'embedded') copyFileSync(out, join(ROOT, 'docs', name));
    }
  });
}));
