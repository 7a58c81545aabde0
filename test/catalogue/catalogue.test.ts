import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CANONICAL_FIELDS, TOOL_KINDS, TOOL_NAMESPACES } from '../../src/canonical/meta.ts';
import {
  CATALOGUE_ROWS,
  findCatalogueRow,
  listReadOnlyTools,
  listToolsByNamespace,
  renderCatalogueMarkdown,
} from '../../src/catalogue/index.ts';
import { MCP_INPUT_NAMES } from '../../src/catalogue/rows.ts';

const rowsSource = readFileSync(new URL('../../src/catalogue/rows.ts', import.meta.url), 'utf8');

describe('catalogue module', () => {
  it('has zero imports (SPEC §6), read as text', () => {
    const code = rowsSource.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '');
    expect(code).not.toMatch(/^\s*import[\s{*'"]/m);
    expect(code).not.toMatch(/\bimport\s*\(/);
    expect(code).not.toMatch(/\brequire\s*\(/);
    expect(code).not.toMatch(/^\s*export\s+(\*|\{[^}]*\})\s+from\b/m);
  });

  it('declares every family of the issue, with the tools the issue names', () => {
    const byNs = listToolsByNamespace();
    for (const ns of TOOL_NAMESPACES) expect(byNs.get(ns)?.length ?? 0, ns).toBeGreaterThan(0);
    const names = (ns: (typeof TOOL_NAMESPACES)[number]): string[] => (byNs.get(ns) ?? []).map((r) => r.name);
    expect(names('grok_build')).toEqual(expect.arrayContaining(['ReadFile', 'SearchReplace', 'Bash', 'Task']));
    expect(names('grok_build_concise')).toEqual(expect.arrayContaining(['read_file', 'search_replace', 'bash']));
    expect(names('grok_build_hashline')).toEqual(expect.arrayContaining(['read_file', 'edit', 'grep']));
    expect(names('codex')).toEqual(expect.arrayContaining(['apply_patch', 'read_file', 'list_dir', 'grep_files', 'shell', 'update_plan', 'view_image']));
    expect(names('opencode')).toEqual(expect.arrayContaining(['read', 'write', 'edit', 'bash', 'glob', 'grep', 'skill', 'todowrite']));
    expect(names('claude_code')).toEqual(
      expect.arrayContaining(['Read', 'Write', 'Edit', 'MultiEdit', 'Bash', 'Grep', 'Glob', 'LS', 'WebFetch', 'WebSearch', 'Task', 'TodoWrite', 'NotebookEdit']),
    );
    expect(names('mcp')).toEqual(['search_tool', 'use_tool']);
  });
});

// One contract test over every row: a new row is tested the day it is added.
describe.each(CATALOGUE_ROWS.map((r) => [`${r.ns}/${r.name}`, r] as const))('catalogue row %s', (_key, row) => {
  it('is well formed', () => {
    expect(TOOL_NAMESPACES).toContain(row.ns);
    expect(TOOL_KINDS).toContain(row.kind);
    expect(row.name).toMatch(/^[A-Za-z][A-Za-z0-9_-]*$/);
    expect(row.label.length).toBeGreaterThan(0);
    expect(typeof row.readOnly).toBe('boolean');
  });

  it('maps raw parameters only onto the eight canonical fields, each from a distinct raw name', () => {
    if (row.input === null) return;
    const fields = Object.keys(row.input);
    expect(fields.length).toBeGreaterThan(0); // an empty map must be written as null (input omitted)
    for (const f of fields) expect(CANONICAL_FIELDS).toContain(f);
    const raws = Object.values(row.input).flat();
    for (const raw of raws) expect(raw.length).toBeGreaterThan(0);
    expect(new Set(raws).size).toBe(raws.length);
  });

  it('never projects a large or family-specific field', () => {
    const projected = new Set(row.input === null ? [] : Object.values(row.input).flat());
    for (const f of [...row.large, ...row.specific]) expect(projected.has(f), `${f} is projected`).toBe(false);
  });

  it('is found by lookup in its own family', () => {
    expect(findCatalogueRow(row.ns, row.name)).toBe(row);
  });

  it('is in the derived read-only set exactly when it is read-only', () => {
    expect(listReadOnlyTools().includes(`${row.ns}/${row.name}`)).toBe(row.readOnly);
  });

  it('read-only kinds agree with read_only: an edit, delete, move or execute tool is never read-only', () => {
    if (['edit', 'delete', 'move', 'execute'].includes(row.kind)) expect(row.readOnly).toBe(false);
  });
});

describe('derived lists', () => {
  it('per-namespace sets partition the rows', () => {
    const total = [...listToolsByNamespace().values()].reduce((n, rows) => n + rows.length, 0);
    expect(total).toBe(CATALOGUE_ROWS.length);
  });

  it('the meta-tools are found from any harness', () => {
    for (const ns of TOOL_NAMESPACES) {
      expect(findCatalogueRow(ns, 'use_tool')?.ns).toBe('mcp');
      expect(findCatalogueRow(ns, 'search_tool')?.ns).toBe('mcp');
    }
  });

  it('MCP input names project only onto canonical fields', () => {
    expect(Object.keys(MCP_INPUT_NAMES).sort()).toEqual([...CANONICAL_FIELDS].sort());
  });

  it("docs/catalogue.md's table is the one derived from the rows", () => {
    const page = readFileSync(new URL('../../docs/catalogue.md', import.meta.url), 'utf8');
    const match = /<!-- catalogue:start -->\n([\s\S]*?)\n<!-- catalogue:end -->/.exec(page);
    expect(match, 'docs/catalogue.md has no catalogue markers').not.toBeNull();
    expect(match?.[1]).toBe(renderCatalogueMarkdown());
  });
});
