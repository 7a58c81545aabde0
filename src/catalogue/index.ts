// Typed view of the catalogue rows and every list derived from them (never kept by hand).
import type { CanonicalField, ToolKind, ToolNamespace } from '../canonical/meta.ts';
import { CATALOGUE } from './rows.ts';

export interface CatalogueRow {
  readonly ns: ToolNamespace;
  readonly name: string;
  readonly kind: ToolKind;
  readonly label: string;
  readonly readOnly: boolean;
  readonly input: { readonly [F in CanonicalField]?: readonly string[] } | null;
  readonly large: readonly string[];
  readonly specific: readonly string[];
  readonly note?: string;
  /** 'search' on a family's tool-search meta-tool (SPEC §6). */
  readonly discovery?: 'search';
}

/** Every row, checked against the row type at compile time. */
export const CATALOGUE_ROWS: readonly CatalogueRow[] = CATALOGUE satisfies readonly CatalogueRow[];

/** The family of the MCP meta-tools (search_tool / use_tool), reachable from any harness. */
export const META_TOOL_NAMESPACE: ToolNamespace = 'mcp';

/** Rows by family, then by name (two lookups, no key built per call: this is on every event's path). */
const byFamily = new Map<ToolNamespace, Map<string, CatalogueRow>>();
for (const row of CATALOGUE_ROWS) {
  let names = byFamily.get(row.ns);
  if (names === undefined) byFamily.set(row.ns, (names = new Map()));
  if (names.has(row.name)) throw new Error(`Catalogue declares ${row.ns}/${row.name} twice`);
  names.set(row.name, row);
}
const metaTools = byFamily.get(META_TOOL_NAMESPACE) ?? new Map<string, CatalogueRow>();

/** The row of a tool in a family, or of an MCP meta-tool, or undefined. */
export function findCatalogueRow(namespace: ToolNamespace, name: string): CatalogueRow | undefined {
  return byFamily.get(namespace)?.get(name) ?? metaTools.get(name);
}

/** True when the tool is its family's (or the MCP) tool-search meta-tool. */
export function isSearchMetaTool(namespace: ToolNamespace, name: string): boolean {
  return findCatalogueRow(namespace, name)?.discovery === 'search';
}

/** The search meta-tools, as `namespace/name` keys (derived from the rows). */
export function listSearchMetaTools(): readonly string[] {
  return CATALOGUE_ROWS.filter((r) => r.discovery === 'search').map((r) => `${r.ns}/${r.name}`);
}

/** Tools of each namespace, in declaration order. */
export function listToolsByNamespace(): ReadonlyMap<ToolNamespace, readonly CatalogueRow[]> {
  const out = new Map<ToolNamespace, CatalogueRow[]>();
  for (const row of CATALOGUE_ROWS) {
    const list = out.get(row.ns) ?? [];
    list.push(row);
    out.set(row.ns, list);
  }
  return out;
}

/** The read-only set, as `namespace/name` keys. */
export function listReadOnlyTools(): readonly string[] {
  return CATALOGUE_ROWS.filter((r) => r.readOnly).map((r) => `${r.ns}/${r.name}`);
}

/** The catalogue as a Markdown table (the README's catalogue section is generated from this). */
export function renderCatalogueMarkdown(): string {
  const lines = [
    '| namespace | tool | kind | read-only | canonical input ← raw parameters | large | family-specific | discovery |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of CATALOGUE_ROWS) {
    const mapping =
      r.input === null
        ? '(no stable projection)'
        : Object.entries(r.input)
            .map(([field, raws]) => `${field} ← ${(raws ?? []).map((x) => `\`${x}\``).join(' / ')}`)
            .join('; ');
    const list = (xs: readonly string[]): string => (xs.length ? xs.map((x) => `\`${x}\``).join(', ') : '');
    lines.push(
      `| ${r.ns} | \`${r.name}\` | ${r.kind} | ${r.readOnly ? 'yes' : 'no'} | ${mapping} | ${list(r.large)} | ${list(r.specific)} | ${r.discovery === 'search' ? 'search meta-tool' : ''} |`,
    );
  }
  return lines.join('\n');
}
