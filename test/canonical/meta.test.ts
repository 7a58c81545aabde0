import { describe, expect, it } from 'vitest';
import { CANONICAL_FIELDS, TOOL_KINDS, TOOL_META_VERSION, TOOL_NAMESPACES } from '../../src/canonical/meta.ts';

describe('canonical vocabulary (SPEC §1, §3)', () => {
  it('has exactly the eight canonical fields, and no content field', () => {
    expect([...CANONICAL_FIELDS]).toEqual(['path', 'offset', 'limit', 'command', 'description', 'cwd', 'directory', 'pattern']);
    expect(CANONICAL_FIELDS).not.toContain('content');
  });

  it('meta version is the number 1, not a string', () => {
    expect(TOOL_META_VERSION).toBe(1);
    expect(typeof TOOL_META_VERSION).toBe('number');
  });

  it('tool kinds are the ACP kinds', () => {
    expect([...TOOL_KINDS]).toEqual(['read', 'edit', 'delete', 'move', 'search', 'execute', 'think', 'fetch', 'switch_mode', 'other']);
  });

  it('namespaces are the SPEC §1 families plus the harnesses toolcanon imports', () => {
    expect([...TOOL_NAMESPACES].sort()).toEqual(
      ['grok_build', 'grok_build_concise', 'grok_build_hashline', 'codex', 'opencode', 'memory', 'lsp', 'skills', 'mcp', 'claude_code', 'gemini_cli', 'qwen_code', 'copilot_cli', 'pi_agent', 'openclaw', 'cline', 'roo_code', 'kilo_code', 'kimi', 'amp', 'droid', 'goose', 'hermes_agent', 'aider', 'codebuff'].sort(),
    );
  });
});
