// Issue 29 item 6: a tools/list snapshot logged as the MCP client received it names each tool by
// the server's own name (`create_issue`); the registry qualifies it (`server__tool`, SPEC §2).
// Such a name is qualified with the snapshot's server and the row says so (name_qualified), so
// two servers' `create_issue` stay two tools, in mcp_tool_registrations and in `report mcp`;
// names already qualified keep the one-separator rule. The real CLI on both engines with the same
// assertions (test/helpers/engines.ts: embedded chdb and a ClickHouse server); then a database
// whose rows were stored before (raw name, flagged) migrated to the same rows.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeEvent } from '../../src/decode/event.ts';
import { makeTempDir } from '../helpers/db.ts';
import { forEachEngine } from '../helpers/engines.ts';
import { cli } from '../helpers/faults.ts';

const tmp = makeTempDir('mcp-raw-names');
afterAll(() => tmp.cleanup());

const snapshot = (server: string, at: string, tools: readonly string[]): string =>
  JSON.stringify({
    schema: 'toolcanon.event/v1',
    type: 'mcp_tools',
    ts: `2026-12-10T14:02:${at}Z`,
    harness: 'claude_code',
    session_id: 'raw-names-1',
    server,
    client_id: `${server}-1`,
    event_id: `snap-${server}`,
    mcp_initialized: true,
    tools: tools.map((name) => ({ name, model_visible: true, disabled: false })),
  });

const LINES = [
  // Two servers list a tool of the same own name; github also an `mcp__`-prefixed own name.
  snapshot('github', '11.000', ['create_issue', 'list_repos', 'mcp__search_code']),
  snapshot('gitlab', '11.500', ['create_issue']),
  // Already qualified: kept; two separators and another server's name stay flagged.
  snapshot('jira', '12.000', ['jira__create_issue', 'jira__a__b', 'github__create_issue']),
  // A server whose own name holds the separator cannot qualify a name: flagged.
  snapshot('my__srv', '12.500', ['ping']),
];

interface Registration {
  server: string;
  qualified_name: string;
  name_qualified: boolean;
  mcp_server: string;
  mcp_tool: string;
  flags: string[];
}

const input = join(tmp.dir, 'snapshots.jsonl');
writeFileSync(input, `${LINES.join('\n')}\n`);

await forEachEngine('test/mcp/raw-names.test.ts', (engine) => describe('tools listed by their own names (no separator)', () => {
  it('are qualified with the snapshot\'s server: two servers\' create_issue stay two rows, in the table and in report mcp', async () => {
    const db = (await engine.database('mcp-raw-names')).flags;
    const replay = await cli(['replay', input, ...db, '--format', 'json', '--no-progress']);
    expect(replay.code, replay.stderr).toBe(0);

    const query = async (columns: string): Promise<Registration[]> => {
      const q = await cli(['query', `SELECT ${columns} FROM mcp_tool_registrations FINAL ORDER BY server, qualified_name`, ...db, '--format', 'json']);
      expect(q.code, q.stderr).toBe(0);
      return q.stdout.trim().split('\n').map((l) => JSON.parse(l) as Registration);
    };
    // The columns tables had before: two servers' create_issue are two tools, neither flagged.
    const before = await query('server, qualified_name, mcp_server, flags');
    expect(before.filter((r) => r.qualified_name.endsWith('create_issue') && r.flags.length === 0).map((r) => r.qualified_name)).toEqual(['github__create_issue', 'gitlab__create_issue', 'jira__create_issue']);
    const rows = await query('server, qualified_name, name_qualified, mcp_server, mcp_tool, flags');
    expect(rows).toEqual([
      { server: 'github', qualified_name: 'github__create_issue', name_qualified: true, mcp_server: 'github', mcp_tool: 'create_issue', flags: [] },
      { server: 'github', qualified_name: 'github__list_repos', name_qualified: true, mcp_server: 'github', mcp_tool: 'list_repos', flags: [] },
      { server: 'github', qualified_name: 'github__search_code', name_qualified: true, mcp_server: 'github', mcp_tool: 'search_code', flags: [] },
      { server: 'gitlab', qualified_name: 'gitlab__create_issue', name_qualified: true, mcp_server: 'gitlab', mcp_tool: 'create_issue', flags: [] },
      { server: 'jira', qualified_name: 'github__create_issue', name_qualified: false, mcp_server: 'github', mcp_tool: 'create_issue', flags: ['server_mismatch'] },
      { server: 'jira', qualified_name: 'jira__a__b', name_qualified: false, mcp_server: '', mcp_tool: '', flags: ['bad_mcp_name'] },
      { server: 'jira', qualified_name: 'jira__create_issue', name_qualified: false, mcp_server: 'jira', mcp_tool: 'create_issue', flags: [] },
      { server: 'my__srv', qualified_name: 'my__srv__ping', name_qualified: true, mcp_server: '', mcp_tool: '', flags: ['bad_mcp_name'] },
    ]);

    const report = await cli(['report', 'mcp', ...db, '--format', 'json']);
    expect(report.code, report.stderr).toBe(0);
    const servers = new Map(report.stdout.trim().split('\n').map((l) => JSON.parse(l) as { server: string; model_visible: number; bad_names: number }).map((r) => [r.server, r]));
    expect(servers.get('github')).toMatchObject({ model_visible: 3, bad_names: 0 });
    expect(servers.get('gitlab')).toMatchObject({ model_visible: 1, bad_names: 0 });
    expect(servers.get('jira')).toMatchObject({ model_visible: 3, bad_names: 2 });

    // validate warns about the flagged names only.
    const v = await cli(['validate', input]);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout.trim().split('\n').sort()).toEqual([
      `${input}:3: warning: bad_mcp_name: mcp_tools jira: jira__a__b`,
      `${input}:3: warning: server_mismatch: mcp_tools jira: github__create_issue`,
      `${input}:4: warning: bad_mcp_name: mcp_tools my__srv: my__srv__ping`,
    ]);
  }, 120_000);

  it('rows stored before (the raw name, flagged bad_mcp_name) are stored again qualified by the migration, with the ids a replay gives now', async () => {
    const sink = await engine.open(await engine.database('mcp-raw-names-old'));
    // What the decoder stored before: the own name as the qualified name, flagged, no server.
    const now = decodeEvent(Buffer.from(LINES[0] as string), 'old.jsonl:1', '2026-12-10 15:00:00.000');
    if (now.kind !== 'mcp') throw new Error('not an MCP event');
    const before = now.registrations.map((r) => ({ ...r, registration_id: `old-${r.mcp_tool}`, qualified_name: r.mcp_tool, name_qualified: false, mcp_server: '', mcp_tool: '', flags: ['bad_mcp_name' as const] }));
    await sink.writeMcpToolRegistrations(before);
    await sink.client.command({ query: 'ALTER TABLE schema_migrations DELETE WHERE version = 11 SETTINGS mutations_sync = 2' });
    await sink.migrate();
    const rows = await sink.queryRows<Registration & { registration_id: string }>(
      'SELECT registration_id, server, qualified_name, name_qualified, mcp_server, mcp_tool, flags FROM mcp_tool_registrations FINAL ORDER BY qualified_name',
    );
    expect(rows).toEqual(now.registrations.map((r) => ({ registration_id: r.registration_id, server: r.server, qualified_name: r.qualified_name, name_qualified: true, mcp_server: r.mcp_server, mcp_tool: r.mcp_tool, flags: [] })));
    // Run again: nothing changes.
    await sink.client.command({ query: 'ALTER TABLE schema_migrations DELETE WHERE version = 11 SETTINGS mutations_sync = 2' });
    await sink.migrate();
    expect(await sink.queryRows('SELECT registration_id, server, qualified_name, name_qualified, mcp_server, mcp_tool, flags FROM mcp_tool_registrations FINAL ORDER BY qualified_name')).toEqual(rows);
  }, 120_000);
}));
