// Projects one raw tool call onto CanonicalToolMeta (SPEC §3): attribution to a family or an MCP
// server, the catalogue's kind / label / read_only, and the eight canonical fields.
import {
  INTEGER_CANONICAL_FIELDS,
  TOOL_META_VERSION,
  type CanonicalToolMeta,
  type CanonicalField,
  type Harness,
  type ToolKind,
  type ToolNamespace,
} from '../canonical/meta.ts';
import { MCP_HARNESS_PREFIX, MCP_SEPARATOR, parseMcpName, stripMcpPrefix } from '../canonical/mcp.ts';
import { findCatalogueRow, type CatalogueRow } from '../catalogue/index.ts';
import { MCP_INPUT_NAMES } from '../catalogue/rows.ts';
import { indexObject, type Members, type MemberSpan } from '../util/json-spans.ts';
import type { RowFlag, ToolCallRow } from '../model/records.ts';

type CanonicalColumns = Record<CanonicalField, string | null>;

export interface Projection {
  readonly namespace: ToolNamespace;
  readonly toolName: string;
  readonly kind: ToolKind;
  readonly label: string;
  readonly readOnly: boolean;
  /** JSON text of CanonicalToolMeta.input; '' when the input is omitted. */
  readonly canonicalInput: string;
  /** One value per canonical field: decoded text, integers as decimal text, null when absent. */
  readonly columns: CanonicalColumns;
  readonly via: 'direct' | 'use_tool';
  readonly mcpServer: string;
  readonly mcpTool: string;
  readonly flags: RowFlag[];
}

/** A view of the raw input: its verbatim text and, when it is a JSON object, its members. */
export interface RawInput {
  /** The raw input verbatim: the object's JSON text, or the string's content. */
  readonly text: string;
  /** True when the envelope carried the input as a JSON string rather than an object. */
  readonly wasString: boolean;
  /** True when `text` is known to be JSON text (its redaction parsed it): not parsed again. */
  readonly knownJson?: boolean;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INTEGER_TEXT = /^-?(0|[1-9][0-9]*)$/;
const SHELL_WRAPPERS = new Set(['bash', 'sh', 'zsh', '/bin/bash', '/bin/sh', '/bin/zsh', '/usr/bin/bash']);

function emptyColumns(): CanonicalColumns {
  return { path: null, offset: null, limit: null, command: null, description: null, cwd: null, directory: null, pattern: null };
}

/**
 * The command of an argv array as one string: the script of `["bash", "-lc", script]`,
 * otherwise the words joined by spaces (words with spaces or quotes are single-quoted).
 */
export function joinArgv(argv: readonly string[]): string {
  const [shell, flag, script] = argv;
  if (argv.length === 3 && shell !== undefined && SHELL_WRAPPERS.has(shell) && (flag === '-lc' || flag === '-c') && script !== undefined) {
    return script;
  }
  return argv.map((w) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}

interface FieldValue {
  /** JSON text for the canonical input (verbatim from the raw input where possible). */
  readonly json: string;
  readonly column: string;
}

/** Converts one raw member into a canonical value, or reports why it cannot be projected. */
function toCanonicalValue(field: CanonicalField, rawText: string): FieldValue | RowFlag {
  if (INTEGER_CANONICAL_FIELDS.has(field)) {
    if (!INTEGER_TEXT.test(rawText) && rawText !== '-0') return 'canonical_type_mismatch';
    const value = BigInt(rawText);
    if (value < INT64_MIN || value > INT64_MAX) return 'canonical_out_of_range';
    return { json: rawText, column: value.toString() };
  }
  const first = rawText.charCodeAt(0);
  if (first === 34 /* " */) return { json: rawText, column: JSON.parse(rawText) as string };
  if (first === 91 /* [ */ && field === 'command') {
    const argv: unknown = JSON.parse(rawText);
    if (Array.isArray(argv) && argv.every((w): w is string => typeof w === 'string')) {
      const command = joinArgv(argv);
      return { json: JSON.stringify(command), column: command };
    }
  }
  return 'canonical_type_mismatch';
}

type FieldNames = { readonly [F in CanonicalField]?: readonly string[] };
/** The fields and aliases of each catalogue row's names, listed once (not per event). */
const ENTRIES = new WeakMap<FieldNames, readonly (readonly [CanonicalField, readonly string[]])[]>();
function entriesOf(names: FieldNames): readonly (readonly [CanonicalField, readonly string[]])[] {
  let entries = ENTRIES.get(names);
  if (entries === undefined) {
    entries = Object.entries(names) as [CanonicalField, readonly string[]][];
    ENTRIES.set(names, entries);
  }
  return entries;
}

/** Projects the members of an object onto the canonical fields named in `names`. */
function projectMembers(
  text: string,
  members: Members,
  names: FieldNames,
  flags: RowFlag[],
): { canonicalInput: string; columns: CanonicalColumns } {
  const columns = emptyColumns();
  const parts: string[] = [];
  for (const [field, aliases] of entriesOf(names)) {
    let span: MemberSpan | undefined;
    for (const alias of aliases) {
      span = members.get(alias);
      if (span !== undefined) break;
    }
    if (span === undefined) continue;
    const rawText = text.slice(span.start, span.end);
    if (rawText === 'null') continue; // an explicit null is an absent value
    const value = toCanonicalValue(field, rawText);
    if (typeof value === 'string') {
      if (!flags.includes(value)) flags.push(value);
      continue;
    }
    columns[field] = value.column;
    parts.push(`"${field}":${value.json}`);
  }
  // An empty projection is omitted, never written as {}.
  return { canonicalInput: parts.length ? `{${parts.join(',')}}` : '', columns };
}

/** The members of the raw input, when it is (or its string holds) a JSON object. */
function indexRawInput(raw: RawInput, flags: RowFlag[], projectionExpected: boolean): { text: string; members: Members } | undefined {
  if (raw.wasString && raw.knownJson !== true) {
    try {
      JSON.parse(raw.text);
    } catch {
      if (projectionExpected) flags.push('input_not_json');
      return undefined;
    }
  }
  const index = indexObject(raw.text);
  if (index === undefined) {
    if (projectionExpected) flags.push('input_not_object');
    return undefined;
  }
  return { text: raw.text, members: index.members };
}

function projectCatalogued(row: CatalogueRow, raw: RawInput): Projection {
  const flags: RowFlag[] = [];
  let canonicalInput = '';
  let columns = emptyColumns();
  if (row.input !== null) {
    const indexed = indexRawInput(raw, flags, true);
    if (indexed) ({ canonicalInput, columns } = projectMembers(indexed.text, indexed.members, row.input, flags));
  }
  return {
    namespace: row.ns,
    toolName: row.name,
    kind: row.kind,
    label: row.label,
    readOnly: row.readOnly,
    canonicalInput,
    columns,
    via: 'direct',
    mcpServer: '',
    mcpTool: '',
    flags,
  };
}

/** An MCP tool: attributed to its server when the name is valid, flagged (never split) when not. */
function projectMcp(name: string, via: 'direct' | 'use_tool', input: { text: string; members: Members } | undefined, flags: RowFlag[]): Projection {
  const parsed = parseMcpName(stripMcpPrefix(name));
  let canonicalInput = '';
  let columns = emptyColumns();
  if (parsed.ok && input) ({ canonicalInput, columns } = projectMembers(input.text, input.members, MCP_INPUT_NAMES, flags));
  if (!parsed.ok) flags.push('bad_mcp_name');
  return {
    namespace: 'mcp',
    // A valid name is stored qualified (`server__tool`, any harness prefix stripped) so the same
    // tool groups together across harnesses; a bad one is kept exactly as it was sent.
    toolName: parsed.ok ? parsed.qualified : name,
    kind: 'other',
    label: parsed.ok ? `${parsed.server}: ${parsed.tool}` : name,
    // Nothing is known of an MCP tool's effects: it is not assumed read-only.
    readOnly: false,
    canonicalInput,
    columns,
    via,
    mcpServer: parsed.ok ? parsed.server : '',
    mcpTool: parsed.ok ? parsed.tool : '',
    flags,
  };
}

/** use_tool is a call of the tool it names (SPEC §1): attribute it there, projection from tool_input. */
function projectUseTool(useTool: CatalogueRow, raw: RawInput): Projection {
  const flags: RowFlag[] = [];
  const indexed = indexRawInput(raw, flags, true);
  const nameSpan = indexed?.members.get('tool_name');
  const nameText = nameSpan && indexed ? indexed.text.slice(nameSpan.start, nameSpan.end) : '';
  if (!indexed || !nameText.startsWith('"')) {
    flags.push('use_tool_without_tool_name');
    return { ...projectCatalogued(useTool, raw), flags };
  }
  const toolName = JSON.parse(nameText) as string;
  const inputSpan = indexed.members.get('tool_input');
  let toolInput: { text: string; members: Members } | undefined;
  if (inputSpan) {
    const index = indexObject(indexed.text, inputSpan.start, inputSpan.end);
    if (index) toolInput = { text: indexed.text, members: index.members };
  }
  return projectMcp(toolName, 'use_tool', toolInput, flags);
}

/** True when an uncatalogued tool name reads as an MCP tool in this harness. */
function looksLikeMcpTool(harness: Harness, tool: string): boolean {
  return harness === 'mcp' || tool.startsWith(MCP_HARNESS_PREFIX) || tool.includes(MCP_SEPARATOR);
}

export function projectToolCall(harness: Harness, tool: string, raw: RawInput): Projection {
  const row = findCatalogueRow(harness, tool);
  if (row?.ns === 'mcp' && row.name === 'use_tool') return projectUseTool(row, raw);
  if (row) return projectCatalogued(row, raw);
  if (looksLikeMcpTool(harness, tool)) {
    // MCP arguments are JSON objects by protocol: a string that is not one is flagged too.
    const flags: RowFlag[] = [];
    return projectMcp(tool, 'direct', indexRawInput(raw, flags, true), flags);
  }
  // A known harness with an unknown tool is kept and flagged, so new tools show up in analytics.
  return {
    namespace: harness,
    toolName: tool,
    kind: 'other',
    label: tool,
    readOnly: false,
    canonicalInput: '',
    columns: emptyColumns(),
    via: 'direct',
    mcpServer: '',
    mcpTool: '',
    flags: ['uncatalogued'],
  };
}

/**
 * CanonicalToolMeta as JSON text. Everything but the projection is typed against the meta and
 * serialised as such (key order as the type declares it); the projection is spliced in as the
 * text it already is, so integers beyond 2^53 in the input stay exact.
 */
export function renderCanonicalMeta(p: Pick<Projection, 'toolName' | 'kind' | 'namespace' | 'label' | 'readOnly' | 'canonicalInput'>): string {
  const meta: Omit<CanonicalToolMeta, 'input'> = {
    version: TOOL_META_VERSION,
    name: p.toolName,
    kind: p.kind,
    namespace: p.namespace,
    label: p.label,
    read_only: p.readOnly,
  };
  const head = JSON.stringify(meta);
  return p.canonicalInput === '' ? head : `${head.slice(0, -1)},"input":${p.canonicalInput}}`;
}

/** CanonicalToolMeta as JSON text, from a stored tool_calls row. */
export function renderRowCanonicalMeta(row: Pick<ToolCallRow, 'tool_name' | 'kind' | 'namespace' | 'label' | 'read_only' | 'canonical_input'>): string {
  return renderCanonicalMeta({
    toolName: row.tool_name,
    kind: row.kind,
    namespace: row.namespace,
    label: row.label,
    readOnly: row.read_only,
    canonicalInput: row.canonical_input,
  });
}
