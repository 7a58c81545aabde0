// The canonical vocabulary every other module speaks (SPEC §1-§3). This file imports nothing.

/** The version of CanonicalToolMeta this pipeline writes: the number 1, never a string. */
export const TOOL_META_VERSION = 1 as const;

/** Exactly eight canonical fields, no more (SPEC §3: there is no `content` field). */
export const CANONICAL_FIELDS = [
  'path',
  'offset',
  'limit',
  'command',
  'description',
  'cwd',
  'directory',
  'pattern',
] as const;
export type CanonicalField = (typeof CANONICAL_FIELDS)[number];

/** Canonical fields whose value is an integer (a position or a count); the rest are strings. */
export const INTEGER_CANONICAL_FIELDS: ReadonlySet<CanonicalField> = new Set(['offset', 'limit']);

/** Agent Client Protocol tool kinds (SPEC §3). */
export const TOOL_KINDS = [
  'read',
  'edit',
  'delete',
  'move',
  'search',
  'execute',
  'think',
  'fetch',
  'switch_mode',
  'other',
] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

/** Tool implementation families (SPEC §1). `mcp` holds tools attached at run time. */
export const TOOL_NAMESPACES = [
  'grok_build',
  'grok_build_concise',
  'grok_build_hashline',
  'codex',
  'opencode',
  'memory',
  'lsp',
  'skills',
  'mcp',
  'claude_code',
  'gemini_cli',
  'qwen_code',
  'copilot_cli',
  'pi_agent',
  'openclaw',
  'cline',
  'roo_code',
  'kilo_code',
  'kimi',
  'amp',
  'droid',
  'goose',
  'hermes_agent',
  'aider',
  'codebuff',
] as const;
export type ToolNamespace = (typeof TOOL_NAMESPACES)[number];

/** The harnesses an event envelope may name: every namespace (a family is also a harness). */
export const HARNESSES = TOOL_NAMESPACES;
export type Harness = ToolNamespace;

/** A value of the projection: strings for text fields, integers (as decimal text when beyond 2^53) for positions. */
export type CanonicalInput = Partial<Record<CanonicalField, string | number | bigint>>;

export interface CanonicalToolMeta {
  readonly version: typeof TOOL_META_VERSION;
  readonly name: string;
  readonly kind: ToolKind;
  readonly namespace: ToolNamespace;
  readonly label: string;
  readonly read_only: boolean;
  /** The projection; omitted entirely (not `{}`) when the tool has no stable projection. */
  readonly input?: CanonicalInput;
}

export function isToolNamespace(name: string): name is ToolNamespace {
  return (TOOL_NAMESPACES as readonly string[]).includes(name);
}
