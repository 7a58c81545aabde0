import { describe, expect, it } from 'vitest';
import { parseMcpName, stripMcpPrefix } from '../../src/canonical/mcp.ts';

describe('MCP qualified names (SPEC §2)', () => {
  it('splits a name with exactly one separator', () => {
    expect(parseMcpName('serena__find_symbol')).toEqual({ ok: true, server: 'serena', tool: 'find_symbol', qualified: 'serena__find_symbol' });
    expect(parseMcpName('context7__get-library-docs')).toMatchObject({ ok: true, server: 'context7', tool: 'get-library-docs' });
    expect(parseMcpName('tavily-search__tavily_search')).toMatchObject({ ok: true, server: 'tavily-search', tool: 'tavily_search' });
  });

  it('refuses zero separators', () => {
    expect(parseMcpName('find_symbol')).toEqual({ ok: false, problem: 'no_separator', qualified: 'find_symbol' });
  });

  it('refuses several separators instead of guessing a split', () => {
    expect(parseMcpName('a__b__c')).toMatchObject({ ok: false, problem: 'several_separators' });
    // Three underscores contain the separator twice (overlapping): ambiguous.
    expect(parseMcpName('a___b')).toMatchObject({ ok: false, problem: 'several_separators' });
  });

  it('refuses an empty server or tool', () => {
    expect(parseMcpName('__tool')).toMatchObject({ ok: false, problem: 'empty_server' });
    expect(parseMcpName('server__')).toMatchObject({ ok: false, problem: 'empty_tool' });
  });

  it("strips a harness's mcp__ prefix before the rule applies", () => {
    expect(stripMcpPrefix('mcp__github__create_issue')).toBe('github__create_issue');
    expect(parseMcpName(stripMcpPrefix('mcp__github__create_issue'))).toMatchObject({ ok: true, server: 'github', tool: 'create_issue' });
    expect(parseMcpName(stripMcpPrefix('mcp__plugin_playwright_playwright__browser_click'))).toMatchObject({
      ok: true,
      server: 'plugin_playwright_playwright',
      tool: 'browser_click',
    });
    expect(parseMcpName(stripMcpPrefix('mcp__github__issues__create'))).toMatchObject({ ok: false, problem: 'several_separators' });
    expect(stripMcpPrefix('serena__find_symbol')).toBe('serena__find_symbol');
  });
});
