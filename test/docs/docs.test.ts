// Issue 32: the docs as a front door. The README stays short (at most 15 KB), every relative link
// of README.md, CONTRIBUTING.md and docs/*.md resolves (the file exists; an #anchor names a
// heading of the page it points to), and the generated regions (catalogue, tables, CLI reference)
// are what the code produces now (scripts/docs.ts writes them).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENERATED, region } from '../../scripts/docs.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const PAGES = ['README.md', 'CONTRIBUTING.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The text outside fenced code blocks and inline code (links there are examples, not links). */
function prose(text: string): string {
  return text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchor of a heading: lower case, punctuation other than - and _ dropped, spaces to -. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(text: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of text.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const s = slug(m[1] as string);
    const n = seen.get(s) ?? 0;
    out.add(n === 0 ? s : `${s}-${n}`);
    seen.set(s, n + 1);
  }
  return out;
}

describe('docs', () => {
  it('the README is at most 15 KB', () => {
    expect(statSync(join(ROOT, 'README.md')).size).toBeLessThanOrEqual(15 * 1024);
  });

  it('links to every page of docs/ from docs/README.md, and to docs/README.md from the README', () => {
    const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
    for (const page of PAGES.filter((p) => p.startsWith('docs/') && p !== 'docs/README.md')) {
      expect(index, `docs/README.md links ${page}`).toContain(`](${page.slice('docs/'.length)})`);
    }
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('](docs/README.md)');
  });

  it('every relative link resolves', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), 'utf8');
      for (const m of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/i.test(target)) continue;
        checked++;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURIComponent(path));
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no such file)`);
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });

  it('catches a broken link and a missing heading (the checker can fail)', () => {
    expect(anchors('## Plain SQL counts each event once\n## A `code` heading: yes\n').has('plain-sql-counts-each-event-once')).toBe(true);
    expect(anchors('## A `code` heading: yes\n').has('a-code-heading-yes')).toBe(true);
    expect(anchors('## Other\n').has('plain-sql')).toBe(false);
    expect(prose('see [x](a.md) and `[y](b.md)`')).toContain('(a.md)');
    expect(prose('see `[y](b.md)`')).not.toContain('(b.md)');
  });

  for (const g of GENERATED) {
    it(`${g.page}: the ${g.name} region is what the code produces (npx tsx scripts/docs.ts)`, () => {
      const text = readFileSync(join(ROOT, g.page), 'utf8');
      expect(region(text, g.name), `${g.page} has <!-- ${g.name}:start --> and <!-- ${g.name}:end -->`).toBeDefined();
      expect(region(text, g.name)).toBe(g.render());
    }, 60_000);
  }
});
