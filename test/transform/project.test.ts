import { describe, expect, it } from 'vitest';
import { decodeEvent } from '../../src/decode/event.ts';
import type { ToolCallRow } from '../../src/model/records.ts';
import { redactInputCounted } from '../../src/redact/redact.ts';
import { joinArgv, projectToolCall, renderCanonicalMeta } from '../../src/transform/project.ts';
import { bytes, eventLine } from '../helpers/events.ts';

const AT = '2026-12-02 10:00:01.000';

function row(line: string): ToolCallRow {
  const outcome = decodeEvent(bytes(line), 'test:1', AT);
  if (outcome.kind !== 'row') throw new Error(`expected a row, got ${JSON.stringify(outcome, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
  return outcome.row;
}

describe('SPEC §3 edit example', () => {
  it('an edit with file_path, old_string, new_string, replace_all projects to { path } only', () => {
    const raw = '{"file_path":"src/lib.rs","old_string":"fn a() {}","new_string":"fn b() {}","replace_all":false}';
    const r = row(eventLine({ tool: 'Edit' }, raw));
    expect(JSON.parse(r.canonical_input)).toEqual({ path: 'src/lib.rs' });
    expect(r.raw_input).toBe(raw);
    expect(r.kind).toBe('edit');
    expect(r.read_only).toBe(false);
    const meta = JSON.parse(renderCanonicalMeta(projectToolCall('claude_code', 'Edit', { text: raw, wasString: false })));
    expect(meta).toEqual({ version: 1, name: 'Edit', kind: 'edit', namespace: 'claude_code', label: 'Edit file', read_only: false, input: { path: 'src/lib.rs' } });
  });
});

describe('CanonicalToolMeta.input', () => {
  it('is omitted, not {}, when the tool has no stable projection', () => {
    const meta = JSON.parse(renderCanonicalMeta(projectToolCall('claude_code', 'TodoWrite', { text: '{"todos":[]}', wasString: false })));
    expect(meta).not.toHaveProperty('input');
    expect(meta.version).toBe(1);
  });

  it('is omitted when none of the mapped raw fields is present', () => {
    const r = row(eventLine({ tool: 'Read' }, '{"pages":"1-3"}'));
    expect(r.canonical_input).toBe('');
    expect(JSON.parse(renderCanonicalMeta(projectToolCall('claude_code', 'Read', { text: '{"pages":"1-3"}', wasString: false })))).not.toHaveProperty('input');
  });

  it('maps each family spelling onto the shared names', () => {
    expect(JSON.parse(row(eventLine({ harness: 'opencode', tool: 'read' }, '{"filePath":"/a.ts","offset":3,"limit":20}')).canonical_input)).toEqual({ path: '/a.ts', offset: 3, limit: 20 });
    expect(JSON.parse(row(eventLine({ harness: 'codex', tool: 'list_dir' }, '{"dir_path":"/repo","depth":2}')).canonical_input)).toEqual({ directory: '/repo' });
    expect(JSON.parse(row(eventLine({ harness: 'grok_build', tool: 'read_file' }, '{"target_file":"/tmp/hello.py"}')).canonical_input)).toEqual({ path: '/tmp/hello.py' });
    expect(JSON.parse(row(eventLine({ harness: 'claude_code', tool: 'Grep' }, '{"pattern":"TODO","path":"src","-n":true,"head_limit":20}')).canonical_input)).toEqual({ pattern: 'TODO', path: 'src', limit: 20 });
  });

  it("keeps the script of Codex's argv command and maps workdir to cwd", () => {
    const r = row(eventLine({ harness: 'codex', tool: 'shell', input: JSON.stringify({ command: ['bash', '-lc', 'rg -n foo src'], workdir: '/repo', timeout_ms: 120000 }) }));
    expect(JSON.parse(r.canonical_input)).toEqual({ command: 'rg -n foo src', cwd: '/repo' });
    expect(r.command).toBe('rg -n foo src');
    expect(joinArgv(['git', 'commit', '-m', "it's done"])).toBe(`git commit -m 'it'\\''s done'`);
    // local_shell_call's action names the directory working_directory.
    const local = row(eventLine({ harness: 'codex', tool: 'shell' }, '{"type":"exec","command":["bash","-lc","ls"],"working_directory":"/w"}'));
    expect(JSON.parse(local.canonical_input)).toEqual({ command: 'ls', cwd: '/w' });
  });

  it('flags a mapped field of the wrong type and leaves it out', () => {
    const r = row(eventLine({ tool: 'Read' }, '{"file_path":"a.txt","offset":"ten"}'));
    expect(JSON.parse(r.canonical_input)).toEqual({ path: 'a.txt' });
    expect(r.flags).toContain('canonical_type_mismatch');
  });
});

describe('raw_input is lossless', () => {
  it('keeps integers beyond 2^53, -0, unicode escapes and key order byte for byte', () => {
    const raw = '{"z_last_key_first":1,"file_path":"caf\\u00e9/\\ud83d\\ude00.rs","offset":9007199254740993,"limit":-0,"nested":{"b":1e400,"a":[0.1,-0.0]}}';
    const r = row(eventLine({ tool: 'Read' }, raw));
    expect(r.raw_input).toBe(raw);
    // The projection keeps the exact integer too, as text.
    expect(r.canonical_input).toBe('{"path":"caf\\u00e9/\\ud83d\\ude00.rs","offset":9007199254740993,"limit":-0}');
    expect(r.offset).toBe('9007199254740993');
    expect(r.path).toBe('café/😀.rs');
  });

  it('keeps a JSON-string input as the string it carried', () => {
    const inner = '{"command":["bash","-lc","ls"],"workdir":"/w"}';
    const r = row(eventLine({ harness: 'codex', tool: 'shell', input: inner }));
    expect(r.raw_input).toBe(inner);
  });

  it('drops an out-of-range position from the projection, flags it, and keeps it in raw_input', () => {
    const raw = '{"file_path":"a","offset":123456789012345678901}';
    const r = row(eventLine({ tool: 'Read' }, raw));
    expect(r.raw_input).toBe(raw);
    expect(r.offset).toBeNull();
    expect(r.flags).toContain('canonical_out_of_range');
  });
});

describe('MCP attribution', () => {
  it('attributes use_tool to the MCP tool it names, projecting from tool_input', () => {
    const raw = '{"tool_name":"serena__find_symbol","tool_input":{"relative_path":"src/app.py","name_path":"App/run"}}';
    const r = row(eventLine({ harness: 'grok_build', tool: 'use_tool' }, raw));
    expect(r).toMatchObject({ namespace: 'mcp', tool_name: 'serena__find_symbol', mcp_server: 'serena', mcp_tool: 'find_symbol', via: 'use_tool', kind: 'other', flags: [] });
    expect(JSON.parse(r.canonical_input)).toEqual({ path: 'src/app.py' });
    expect(r.raw_input).toBe(raw);
  });

  it('flags a use_tool whose name has zero or two separators, and never splits it', () => {
    for (const name of ['find_symbol', 'serena__find__symbol']) {
      const r = row(eventLine({ harness: 'grok_build', tool: 'use_tool' }, `{"tool_name":"${name}","tool_input":{"path":"x"}}`));
      expect(r).toMatchObject({ namespace: 'mcp', tool_name: name, mcp_server: '', mcp_tool: '', via: 'use_tool', flags: ['bad_mcp_name'], canonical_input: '' });
    }
  });

  it('flags a use_tool without a tool_name and keeps it as a use_tool call', () => {
    const r = row(eventLine({ harness: 'grok_build', tool: 'use_tool' }, '{"tool_input":{}}'));
    expect(r).toMatchObject({ namespace: 'mcp', tool_name: 'use_tool', flags: ['use_tool_without_tool_name'] });
  });

  it('strips the mcp__ prefix of Claude Code and new Codex names; reads old Codex server__tool names', () => {
    expect(row(eventLine({ harness: 'claude_code', tool: 'mcp__github__create_issue', input: { title: 't' } }))).toMatchObject({ namespace: 'mcp', tool_name: 'github__create_issue', mcp_server: 'github', via: 'direct' });
    expect(row(eventLine({ harness: 'codex', tool: 'mcp__context7__resolve-library-id', input: '{"libraryName":"react"}' }))).toMatchObject({ namespace: 'mcp', mcp_server: 'context7', mcp_tool: 'resolve-library-id' });
    expect(row(eventLine({ harness: 'codex', tool: 'serena__find_file', input: '{"file_mask":"*.py","relative_path":"."}' }))).toMatchObject({ namespace: 'mcp', mcp_server: 'serena', mcp_tool: 'find_file', path: '.' });
  });

  it('flags MCP arguments that are not JSON, and keeps them verbatim', () => {
    const bad = '{"project": "/p", "note": "runaway ';
    expect(row(eventLine({ harness: 'codex', tool: 'serena__activate_project', input: bad }))).toMatchObject({ namespace: 'mcp', raw_input: bad, flags: ['input_not_json'], canonical_input: '' });
  });

  it('reads a string input as JSON exactly when it is: with escapes, cut short, redacted, or as text', () => {
    // Redaction parses a string input with escapes to know it is JSON text; the projection then
    // takes its word (redactInputCounted) only when the text came back unchanged.
    const escaped = '{"relative_path":"a\\\\b","note":"line\\none"}';
    expect(row(eventLine({ harness: 'codex', tool: 'serena__find_file', input: escaped }))).toMatchObject({ raw_input: escaped, path: 'a\\b', flags: [] });
    const cut = '{"relative_path":"a\\\\b","note":"line\\none';
    expect(row(eventLine({ harness: 'codex', tool: 'serena__find_file', input: cut }))).toMatchObject({ raw_input: cut, path: null, flags: ['input_not_json'] });
    const secret = '{"relative_path":"a\\\\b","password":"hunter2-Xq9!zz"}';
    const redacted = row(eventLine({ harness: 'codex', tool: 'serena__find_file', input: secret }));
    expect(redacted.raw_input).not.toContain('hunter2');
    expect(redacted).toMatchObject({ path: 'a\\b', flags: ['redacted'] });
    const array = '["a\\nb"]';
    expect(row(eventLine({ harness: 'codex', tool: 'serena__find_file', input: array }))).toMatchObject({ raw_input: array, flags: ['input_not_object'] });
  });

  it('says whether a string input came back unchanged as JSON text (redactInputCounted)', () => {
    const said = (text: string): { text: string; json: boolean } => {
      const into = { count: 0, inputJson: true };
      const out = redactInputCounted(text, into);
      return { text: out, json: into.inputJson };
    };
    expect(said('{"a":"x\\ny"}')).toEqual({ text: '{"a":"x\\ny"}', json: true });
    expect(said('[1, "\\t"]')).toEqual({ text: '[1, "\\t"]', json: true });
    // Not parsed (nothing escaped), not JSON, not whole, or changed: no word given.
    expect(said('{"a":"x"}').json).toBe(false);
    expect(said('{"a":"x\\ny"').json).toBe(false);
    expect(said('"x\\ny"').json).toBe(false);
    expect(said('echo "a\\b"').json).toBe(false);
    const changed = said('{"token":"ghp_0123456789abcdefghijABCDEFGHIJ012345","n":"\\n"}');
    expect(changed.text).toContain('[REDACTED:');
    expect(changed.json).toBe(false);
  });

  it('flags a direct MCP call with a bad name', () => {
    expect(row(eventLine({ harness: 'mcp', tool: 'nosep', input: {} }))).toMatchObject({ namespace: 'mcp', tool_name: 'nosep', flags: ['bad_mcp_name'] });
    expect(row(eventLine({ harness: 'claude_code', tool: 'mcp__a__b__c', input: {} }))).toMatchObject({ namespace: 'mcp', tool_name: 'mcp__a__b__c', flags: ['bad_mcp_name'] });
  });

  it('search_tool projects its query as the pattern and its limit', () => {
    expect(JSON.parse(row(eventLine({ harness: 'grok_build', tool: 'search_tool', input: { query: 'git status', limit: 5 } })).canonical_input)).toEqual({ pattern: 'git status', limit: 5 });
  });
});

describe('uncatalogued tools', () => {
  it('are stored with kind other, no input, flagged uncatalogued', () => {
    const r = row(eventLine({ harness: 'claude_code', tool: 'TaskCreate', input: { subject: 'x' } }));
    expect(r).toMatchObject({ namespace: 'claude_code', tool_name: 'TaskCreate', kind: 'other', canonical_input: '', flags: ['uncatalogued'], read_only: false });
  });
});
