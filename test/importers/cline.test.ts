// The Cline importer: its folders (VS Code's globalStorage per OS, the CLI's ~/.cline/data), the
// parser's reading of XML and native tool use, and the shared checks of the Cline format
// (cline-family.ts) over fixtures-cline/: golden events, the figures of figures.py, a rewritten
// task file, a damaged element as a dead letter, Cline's subagents.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clineImporter } from '../../src/importers/cline/index.ts';
import { CLINE_FAMILY } from '../../src/importers/cline/family.ts';
import { parseTaskFile } from '../../src/importers/cline/parser.ts';
import { defaultClinePaths, globalStorageDirs, isTaskFile } from '../../src/importers/cline/paths.ts';
import { describeFamily } from './cline-family.ts';

const FIXTURES = new URL('./fixtures-cline/', import.meta.url).pathname.replace(/\/$/, '');
const A = '1760000000000';
const B = '1760000500000';
type Obj = Record<string, unknown>;

describe('cline paths', () => {
  it('reads the globalStorage of saoudrizwan.claude-dev of each VS Code-based editor per OS, and the CLI data folder', () => {
    const none = (): boolean => false;
    expect(globalStorageDirs('saoudrizwan.claude-dev', {}, '/home/u', 'linux')[0]).toBe('/home/u/.config/Code/User/globalStorage/saoudrizwan.claude-dev');
    expect(globalStorageDirs('saoudrizwan.claude-dev', { XDG_CONFIG_HOME: '/x' }, '/home/u', 'linux')[1]).toBe('/x/Code - Insiders/User/globalStorage/saoudrizwan.claude-dev');
    expect(globalStorageDirs('saoudrizwan.claude-dev', {}, '/Users/u', 'darwin')[0]).toBe('/Users/u/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev');
    expect(globalStorageDirs('saoudrizwan.claude-dev', { APPDATA: 'C:/Users/u/AppData/Roaming' }, 'C:/Users/u', 'win32')[0]).toBe('C:/Users/u/AppData/Roaming/Code/User/globalStorage/saoudrizwan.claude-dev');
    expect(defaultClinePaths({}, '/home/u', 'linux', none)).toEqual(['/home/u/.config/Code/User/globalStorage/saoudrizwan.claude-dev']);
    expect(defaultClinePaths({}, '/home/u', 'linux', (p) => p === '/home/u/.cline/data' || p.includes('/Cursor/'))).toEqual(['/home/u/.config/Cursor/User/globalStorage/saoudrizwan.claude-dev', '/home/u/.cline/data']);
    expect(defaultClinePaths({ CLINE_DIR: '/opt/cline' }, '/home/u', 'linux', (p) => p.startsWith('/opt'))).toEqual(['/opt/cline/data']);
    expect(defaultClinePaths({ CLINE_DATA_DIR: '/srv/cline-data' }, '/home/u', 'linux', none)).toEqual(['/srv/cline-data']);
  });
  it('lists ui_messages.json and api_conversation_history.json of tasks/<id>/ only', () => {
    expect(isTaskFile('/g/tasks/1/ui_messages.json')).toBe(true);
    expect(isTaskFile('/g/tasks/1/api_conversation_history.json')).toBe(true);
    expect(isTaskFile('/g/tasks/1/task_metadata.json')).toBe(false);
    expect(isTaskFile('/g/other/1/ui_messages.json')).toBe(false);
    expect(clineImporter.listFiles([FIXTURES]).map((f) => f.slice(FIXTURES.length + 1))).toEqual([
      `Code/User/globalStorage/saoudrizwan.claude-dev/tasks/${A}/api_conversation_history.json`,
      `Code/User/globalStorage/saoudrizwan.claude-dev/tasks/${A}/ui_messages.json`,
      `dot-cline/data/tasks/${B}/api_conversation_history.json`,
      `dot-cline/data/tasks/${B}/ui_messages.json`,
    ]);
  });
});

describe('cline parser', () => {
  const history = join(FIXTURES, 'Code/User/globalStorage/saoudrizwan.claude-dev/tasks', A, 'api_conversation_history.json');
  const events = (): Obj[] => parseTaskFile(history, readFileSync(history), CLINE_FAMILY).events.map((e) => JSON.parse(e.envelope.text) as Obj);

  it('reads XML tool use: parameters trimmed, use_mcp_tool as server__tool with its arguments, results joined in order', () => {
    const byTool = Object.fromEntries(events().map((e) => [e['tool'], e]));
    expect(byTool['read_file']).toMatchObject({ status: 'ok', input: { path: 'src/math.ts' }, output: 'export const add = (a: number, b: number) => a - b;', turn_id: `${A}#1` });
    expect(byTool['github__get_issue']).toMatchObject({ status: 'ok', input: { owner: 'acme', repo: 'calc', issue_number: 7 }, output: 'Issue 7: add() subtracts' });
    expect(byTool['replace_in_file']).toMatchObject({ status: 'error', error: 'denied: The user denied this operation.' });
    // The feedback given with the denial starts the next turn, as its user_feedback message does in ui_messages.json.
    expect(byTool['execute_command']).toMatchObject({ status: 'error', error: 'Error executing command: exit code 1', input: { command: 'npm test', requires_approval: 'false' }, turn_id: `${A}#2` });
    expect(byTool['attempt_completion']).toMatchObject({ status: 'pending' });
  });

  it('takes a tool use cut off mid-tag as nothing, and a tool_use block without id as a malformed record', () => {
    const data = Buffer.from(JSON.stringify([
      { role: 'user', content: [{ type: 'text', text: '<task>x</task>' }], ts: 1760000000001 },
      { role: 'assistant', content: [{ type: 'text', text: '<read_file>\n<path>a.ts</path>' }], ts: 1760000000002 },
      { role: 'assistant', content: [{ type: 'tool_use', name: 'read_file', input: {} }], ts: 1760000000003 },
    ]));
    const p = parseTaskFile('/t/tasks/1760000000000/api_conversation_history.json', data, CLINE_FAMILY);
    expect(p.events).toEqual([]);
    expect(p.malformed?.map((m) => [m.problem, m.line])).toEqual([['malformed:tool_use', 1]]);
    expect(p.skipped).toEqual({ user_prompt: 1, assistant_without_tool_use: 1 });
  });

  it('gives Cline subagents usage an agent of their own, and counts deleted requests', () => {
    const ui = join(FIXTURES, 'dot-cline/data/tasks', B, 'ui_messages.json');
    const usage = parseTaskFile(ui, readFileSync(ui), CLINE_FAMILY).events.map((e) => JSON.parse(e.envelope.text) as Obj);
    expect(usage.map((u) => u['agent_id'] ?? '')).toEqual(['', '', `subagents:1760000504000`]);
    const uiA = join(FIXTURES, 'Code/User/globalStorage/saoudrizwan.claude-dev/tasks', A, 'ui_messages.json');
    expect(parseTaskFile(uiA, readFileSync(uiA), CLINE_FAMILY).events.map((e) => (JSON.parse(e.envelope.text) as Obj)['request_id'])).toContain(`${A}:1760000021500:deleted_api_reqs`);
  });
});

describe('cline fixtures', () => {
  // python3 fixtures-cline-family/figures.py fixtures-cline cline
  describeFamily({
    importer: clineImporter,
    harness: 'cline',
    fixtures: FIXTURES,
    usage: { [A]: [6, 76, 746, 52_370, 11_170], [B]: [3, 6020, 748, 7096, 0] },
    calls: { [A]: { attempt_completion: 1, execute_command: 1, github__get_issue: 1, read_file: 1, replace_in_file: 1 }, [B]: { attempt_completion: 1, search_files: 1 } },
    task: A,
    research: '/work/research-33/cline',
  });
});
