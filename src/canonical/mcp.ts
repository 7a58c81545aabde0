// MCP qualified tool names (SPEC §2): `server__tool`, the reserved separator exactly once.
// Imports nothing: part of the canonical core.

export const MCP_SEPARATOR = '__';
/** The prefix some harnesses (Claude Code, Codex since 2025-10) put before `server__tool`. */
export const MCP_HARNESS_PREFIX = 'mcp__';

export type McpNameProblem = 'no_separator' | 'several_separators' | 'empty_server' | 'empty_tool';

export type McpName =
  | { readonly ok: true; readonly server: string; readonly tool: string; readonly qualified: string }
  | { readonly ok: false; readonly problem: McpNameProblem; readonly qualified: string };

/** Strips a harness's `mcp__` prefix, when present, before the one-separator rule applies. */
export function stripMcpPrefix(name: string): string {
  return name.startsWith(MCP_HARNESS_PREFIX) ? name.slice(MCP_HARNESS_PREFIX.length) : name;
}

/** Parses a qualified name (prefix already stripped); never splits an ambiguous name. */
export function parseMcpName(qualified: string): McpName {
  const first = qualified.indexOf(MCP_SEPARATOR);
  if (first < 0) return { ok: false, problem: 'no_separator', qualified };
  // Searching from first + 1 also catches `a___b`, which could split two ways.
  if (qualified.indexOf(MCP_SEPARATOR, first + 1) >= 0) {
    return { ok: false, problem: 'several_separators', qualified };
  }
  const server = qualified.slice(0, first);
  const tool = qualified.slice(first + MCP_SEPARATOR.length);
  if (server === '') return { ok: false, problem: 'empty_server', qualified };
  if (tool === '') return { ok: false, problem: 'empty_tool', qualified };
  return { ok: true, server, tool, qualified };
}

/**
 * The qualified name of a tool listed by `server`'s tools/list: a harness's `mcp__` prefix
 * stripped; a name without the separator is the server's own name for the tool (what an MCP
 * client receives, before its registry qualifies it) and gets `server__` in front
 * (`qualifiedHere`). The one-separator rule then applies to the qualified name: a name listed
 * with two separators, or a server whose own name holds one, stays flagged.
 */
export function qualifyMcpName(listed: string, server: string): { readonly qualified: string; readonly parsed: McpName; readonly qualifiedHere: boolean } {
  const stripped = stripMcpPrefix(listed);
  if (stripped.includes(MCP_SEPARATOR)) return { qualified: stripped, parsed: parseMcpName(stripped), qualifiedHere: false };
  const qualified = `${server}${MCP_SEPARATOR}${stripped}`;
  return { qualified, parsed: parseMcpName(qualified), qualifiedHere: true };
}
