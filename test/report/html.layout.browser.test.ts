// The HTML report as people see it, in headless Chromium at 1400 px and 390 px wide, light and
// dark: no table, table box, chart box, card or canvas is wider than its container (scrollWidth ≤
// clientWidth, and its box inside its parent's), the labels of every chart fit (none cut at the
// canvas edge, the rows of a horizontal bar chart no closer than their label lines), every context
// chart draws its threshold line inside its axis and has a time axis of whole units (a session of
// one request is not drawn on a 0–0.001 minute axis), and the bars over time are at least 5 px
// wide when the usage spans months. Two pages: the replayed fixtures as written by the CLI (with a
// test price for grok-4), and the same data with usage spread over seven months and a compaction
// agent's one-request session added (the shape of the shared corpus's Claude compactions).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumOrSkip } from '../helpers/browser.ts';
import { makeTempDir } from '../helpers/db.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const tmp = makeTempDir('html-layout');
const executablePath = chromiumOrSkip('test/report/html.layout.browser.test.ts (report html layout in Chromium)');

const WIDTHS = [1400, 390] as const;
const SCHEMES = ['light', 'dark'] as const;
const DATA_RE = /(<script type="application\/json" id="report-data">)([\s\S]*?)(<\/script>)/;

function toolcanon(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args, '--db', join(tmp.dir, 'db')], { cwd: tmp.dir, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

type Data = Record<string, unknown> & { usage: Record<string, unknown>[]; context: Record<string, unknown>[] };

/** The page's data block, changed by `change`, written back as html.ts writes it (`<` escaped). */
function rewriteData(html: string, change: (data: Data) => void): string {
  const m = DATA_RE.exec(html);
  if (!m) throw new Error('no report-data block');
  const data = JSON.parse(m[2]!) as Data;
  change(data);
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return html.replace(DATA_RE, (_all, open: string, _old: string, close: string) => open + json + close);
}

interface Problem { where: string; what: string }

// The checks run in the page, as plain JavaScript (this project's TypeScript has no DOM types).

/** Every layout problem of the page as loaded (empty when there is none). */
const AUDIT_JS = String.raw`(() => {
  const problems = [];
  const name = (e) => {
    const fig = e.closest('[data-chart]');
    const card = e.closest('.card');
    const table = e.closest('table') || e.querySelector('table');
    const cls = typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\s+/).join('.') : '';
    return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + cls +
      (fig ? ' in [data-chart=' + fig.getAttribute('data-chart') + ']' : table && table.id ? ' of #' + table.id : card && card.querySelector('h3') ? ' in "' + card.querySelector('h3').textContent + '"' : '');
  };
  // Boxes: nothing scrolls sideways, nothing sticks out of its parent's content box.
  for (const e of document.querySelectorAll('main, table, .table-wrap, .card, figure, .plot, canvas, .cards, .grid')) {
    if (e.offsetParent === null && e.tagName !== 'MAIN') continue; // hidden
    if (e.scrollWidth > e.clientWidth) problems.push({ where: name(e), what: 'scrollWidth ' + e.scrollWidth + ' > clientWidth ' + e.clientWidth });
    const ps = getComputedStyle(e.parentElement);
    const right = e.parentElement.getBoundingClientRect().right - parseFloat(ps.paddingRight) - parseFloat(ps.borderRightWidth);
    const box = e.getBoundingClientRect();
    if (box.right > right + 0.5) problems.push({ where: name(e), what: 'right edge ' + box.right.toFixed(1) + " beyond its container's " + right.toFixed(1) });
    if (e.tagName === 'CANVAS' && box.bottom > e.parentElement.getBoundingClientRect().bottom + 0.5) problems.push({ where: name(e), what: 'taller than its plot box' });
  }
  // Charts: labels inside the canvas, rows of horizontal bars no closer than their labels.
  const measure = document.createElement('canvas').getContext('2d');
  for (const canvas of document.querySelectorAll('canvas')) {
    const chart = Chart.getChart(canvas);
    if (!chart) continue;
    const where = name(canvas);
    for (const scale of Object.values(chart.scales)) {
      if (!scale.options.display || !scale.options.ticks.display) continue;
      const font = Chart.helpers.toFont(scale.options.ticks.font);
      measure.font = font.string;
      const labels = scale.ticks.map((t) => (Array.isArray(t.label) ? t.label.map(String) : [String(t.label == null ? '' : t.label)]));
      const widest = Math.max(0, ...labels.flat().map((l) => measure.measureText(l).width));
      if (scale.axis === 'y' && scale.position === 'left') {
        // Right-aligned at the axis: the left edge of the widest label is inside the canvas.
        const leftEdge = scale.right - scale.options.ticks.padding - widest;
        if (leftEdge < -0.5) problems.push({ where, what: scale.id + ' labels cut at the left edge (' + leftEdge.toFixed(1) + ' px)' });
      }
      if (scale.axis === 'y' && scale.type === 'category' && labels.length > 0) {
        const lines = Math.max(...labels.map((l) => l.length));
        const spacing = scale.height / labels.length;
        if (spacing < lines * font.lineHeight) problems.push({ where, what: labels.length + ' ' + scale.id + ' labels of ' + lines + ' line(s) ' + spacing.toFixed(1) + ' px apart (need ' + lines * font.lineHeight + ')' });
      }
      if (scale.axis === 'x' && labels.length > 0 && (scale.left < -0.5 || scale.right > chart.width + 0.5)) problems.push({ where, what: scale.id + ' axis outside the canvas' });
    }
  }
  return problems;
})()`;

/** Per context chart: threshold drawn inside the y axis, x tick labels as shown, x axis title. */
const CONTEXT_JS = String.raw`[...document.querySelectorAll('[data-chart^="context-"]')].map((f) => {
  const chart = Chart.getChart(f.querySelector('canvas'));
  const i = chart.data.datasets.findIndex((d) => d.label === 'threshold');
  const ds = chart.data.datasets[i];
  return {
    name: f.getAttribute('data-chart'),
    thresholdShown: i >= 0 && chart.isDatasetVisible(i) && ds.data.length > 0,
    threshold: ds ? Number(ds.data[0].y) : NaN,
    yMin: chart.scales.y.min,
    yMax: chart.scales.y.max,
    xTicks: chart.scales.x.options.ticks.display === false ? [] : chart.scales.x.ticks.map((t) => String(t.label)),
    xTitle: String(chart.options.scales.x.title.text || ''),
  };
})`;

/** Width in px of the narrowest bar of each chart over time. */
const BARS_JS = String.raw`Object.fromEntries(['tokens-per-day', 'cost-per-day'].flatMap((name) => {
  const canvas = document.querySelector('[data-chart="' + name + '"] canvas');
  return canvas ? [[name, Math.min(...Chart.getChart(canvas).getDatasetMeta(0).data.map((b) => b.width))]] : [];
}))`;

const audit = (page: Page): Promise<Problem[]> => page.evaluate(AUDIT_JS) as Promise<Problem[]>;
interface ContextChart { name: string; thresholdShown: boolean; threshold: number; yMin: number; yMax: number; xTicks: string[]; xTitle: string }
const contextCharts = (page: Page): Promise<ContextChart[]> => page.evaluate(CONTEXT_JS) as Promise<ContextChart[]>;
const barWidths = (page: Page): Promise<Record<string, number>> => page.evaluate(BARS_JS) as Promise<Record<string, number>>;

describe.skipIf(executablePath === null)('report html layout at 1400 px and 390 px, light and dark', () => {
  let browser: Browser;
  const priced = join(tmp.dir, 'report-priced.html');
  const months = join(tmp.dir, 'report-months.html');

  beforeAll(async () => {
    const replay = toolcanon(['replay', join(ROOT, 'fixtures'), '--format', 'json']);
    expect(replay.code, replay.stderr).toBe(0);
    const prices = join(tmp.dir, 'grok-price.json');
    writeFileSync(prices, JSON.stringify({ 'grok-4': { input: 3, cache_read: 0.75, cache_write: 3, output: 15, note: 'a test price' } }));
    const r = toolcanon(['report', 'html', '--out', priced, '--prices', prices]);
    expect(r.code, r.stderr).toBe(0);
    // Usage every third day from May to November (seven months), and a compaction agent's session
    // of one request (its only figure at one instant) as the shared corpus's Claude logs have them.
    writeFileSync(months, rewriteData(readFileSync(priced, 'utf8'), (data) => {
      const start = Date.parse('2026-05-01T00:00:00Z');
      for (let d = 0; d < 213; d += 3) {
        const day = new Date(start + d * 86_400_000).toISOString().slice(0, 10);
        data.usage.push({ day, harness: 'claude_code', model: 'claude-opus-4-6', requests: 3 + (d % 7), tokens: 40_000 + d * 900, cost_usd: 0.5 + (d % 5) / 10, cost_flags: '' });
      }
      data.context.push({
        session_id: '4d5611e5-241a-462a-8d15-5122611a9569', agent_id: 'acompact-e1f845', harness: 'claude_code', model: 'claude-opus-4-6',
        window: 200_000, threshold_pct: 85, headroom_tokens: 0, threshold_tokens: 170_000, breaches: 1,
        points: [[1_770_928_228_082, 173_522]], breach_points: [[1_770_928_228_082, 173_522]],
      });
    }));
    browser = await chromium.launch({ executablePath: executablePath as string, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    tmp.cleanup();
  });

  async function open(file: string, width: number, colorScheme: 'light' | 'dark'): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`file://${file}`);
    await page.waitForSelector('html[data-ready="true"]', { timeout: 20_000 });
    return { page, errors, close: () => context.close() };
  }

  for (const [label, file] of [['the fixtures', priced], ['seven months and a one-request session', months]] as const) {
    for (const width of WIDTHS) {
      for (const scheme of SCHEMES) {
        it(`${label}, ${width} px, ${scheme}: no box wider than its container, every chart label fits`, async () => {
          const { page, errors, close } = await open(file === priced ? priced : months, width, scheme);
          try {
            expect(errors).toEqual([]);
            expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
            // Every table and chart box was looked at (the audit is not vacuous).
            expect(await page.evaluate("[...document.querySelectorAll('table')].filter((e) => e.offsetParent !== null).map((e) => e.id)")).toEqual(['mcp-table', 'sessions', 'prices']);
            expect(await page.$$eval('[data-chart] canvas', (c) => c.length)).toBeGreaterThanOrEqual(14);
            expect(await audit(page)).toEqual([]);
          } finally {
            await close();
          }
        });
      }
    }
  }

  it('every context chart draws its threshold line inside its axis, on a time axis of whole units', async () => {
    for (const width of WIDTHS) {
      const { page, close } = await open(months, width, 'light');
      try {
        const charts = await contextCharts(page);
        expect(charts.length).toBe(7);
        for (const c of charts) {
          expect(c.thresholdShown, `${c.name} at ${width} px`).toBe(true);
          expect(c.yMax, `${c.name} at ${width} px`).toBeGreaterThanOrEqual(c.threshold);
          expect(c.yMin, `${c.name} at ${width} px`).toBeLessThanOrEqual(c.threshold);
          // Tick labels like 0.0002 (a 0–0.001 minute axis) are what a one-request session got.
          for (const t of c.xTicks) expect(t, `${c.name} at ${width} px: x ticks ${c.xTicks.join(' ')}`).toMatch(/^(\d{1,4}(\.\d)?|[\d:]+|)$/);
        }
        // The one-request compaction session says what it is instead of a time axis.
        expect(charts[charts.length - 1]!.xTitle).toMatch(/^one request, 2026-02-12 20:30 UTC$/);
        expect(charts[charts.length - 1]!.xTicks).toEqual([]);
        for (const c of charts.slice(0, -1)) expect(c.xTicks.length, c.name).toBeGreaterThanOrEqual(3);
      } finally {
        await close();
      }
    }
  });

  it('usage over months is drawn in bars at least 5 px wide', async () => {
    for (const width of WIDTHS) {
      const { page, close } = await open(months, width, 'light');
      try {
        const bars = await barWidths(page);
        expect(Object.keys(bars)).toEqual(['tokens-per-day', 'cost-per-day']);
        for (const [name, w] of Object.entries(bars)) expect(w, `${name} at ${width} px`).toBeGreaterThanOrEqual(5);
      } finally {
        await close();
      }
    }
  });
});
