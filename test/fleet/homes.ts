// Two machines' home folders for the fleet test (test/fleet/fleet.e2e.test.ts) and its benchmark
// (bench/fleet.ts): each harness's logs where the harness keeps them (~/.claude/projects,
// ~/.codex/sessions, ~/.gemini/tmp, ~/.qwen, ~/.copilot/session-state), so `toolcanon import
// <harness>` run with HOME set to one of them finds that machine's logs by itself.
//
//   laptop-a: Claude Code (generated sessions, the tool-search fixture with a torn last line an
//             importer cannot read) and Gemini CLI (the fixtures);
//   desk-b:   Codex (generated rollouts), Qwen Code and Copilot CLI (the fixtures), and one
//             Claude Code session whose tool input is nested deeper than the decoder takes
//             (a `too_deep` dead letter wherever it is decoded).
//
// Every session id is distinct across the two homes (the same event read on two machines is one
// event by design; see docs/scaling-out.md), and a machine has several sessions, so its events
// spread over a topic's partitions (records are keyed by session).
import { appendFileSync, copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeClaudeTranscript } from '../importers/generate-claude-code.ts';
import { GENERATED_CODEX_FILE, GENERATED_CODEX_SESSION, writeCodexRollout } from '../importers/generate-codex.ts';

const IMPORTER_FIXTURES = fileURLToPath(new URL('../importers/', import.meta.url));
/** The session id writeClaudeTranscript writes (replaced per copy). */
const GENERATED_CLAUDE_SESSION = '7f3c2a10-0000-4000-8000-000000000001';

export interface Machine {
  /** Its name in the warehouse (`--host`, or $TOOLCANON_HOST). */
  readonly host: string;
  readonly deviceId: string;
  readonly home: string;
  /** The importers that find logs in this home, in the order the test runs them. */
  readonly importers: readonly string[];
  /**
   * How this machine names itself: laptop-a with flags, desk-b through the environment (both
   * ways `import` takes).
   */
  readonly flags: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

export interface Homes {
  readonly machines: readonly [Machine, Machine];
  /** Raw records no importer can read (each an `import_malformed` dead letter). */
  readonly malformed: number;
}

/** A line of a Claude Code transcript no importer can read: cut off mid-record. */
export const TORN_LINE = '{"type":"assistant","message":';

function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** A Claude Code session with one call whose input is nested `depth` deep. */
function deepSession(path: string, depth: number): void {
  const session = '5eed0000-0000-4000-8000-00000000dee9';
  const common = `"sessionId":"${session}","isSidechain":false,"cwd":"/work/b","version":"2.1.30"`;
  const lines = [
    `{"type":"user","uuid":"u-deep","timestamp":"2026-11-03T10:00:00.000Z","message":{"role":"user","content":"walk the tree"},${common}}`,
    `{"type":"assistant","uuid":"a-deep","timestamp":"2026-11-03T10:00:01.000Z","requestId":"req_deep","message":{"model":"claude-opus-4-6","id":"msg_deep","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_deep","name":"mcp__tree__walk","input":${nested(depth)}}],"usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":2000,"output_tokens":12}},${common}}`,
    `{"type":"user","uuid":"r-deep","timestamp":"2026-11-03T10:00:02.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_deep","content":"walked"}]},${common}}`,
  ];
  writeFileSync(path, `${lines.join('\n')}\n`);
}

/**
 * Writes both homes under `dir`: `sessions` generated sessions per machine of about
 * `bytesPerSession` each (Claude Code on laptop-a, Codex on desk-b), plus the fixtures.
 */
export function writeHomes(dir: string, options: { sessions: number; bytesPerSession: number; outputBytes?: number }): Homes {
  const outputBytes = options.outputBytes ?? 300;
  const a = join(dir, 'home-a');
  const b = join(dir, 'home-b');

  // laptop-a: Claude Code and Gemini CLI.
  const claudeDir = join(a, '.claude', 'projects', '-work-app');
  mkdirSync(claudeDir, { recursive: true });
  const claudeTemplate = join(dir, 'claude-template.jsonl');
  writeClaudeTranscript(claudeTemplate, options.bytesPerSession, outputBytes);
  const claude = readFileSync(claudeTemplate, 'utf8');
  rmSync(claudeTemplate);
  for (let i = 0; i < options.sessions; i++) {
    const session = `7f3c2a10-0000-4000-8000-a000000000${i.toString(16).padStart(2, '0')}`;
    writeFileSync(join(claudeDir, `${session}.jsonl`), claude.replaceAll(GENERATED_CLAUDE_SESSION, session));
  }
  const torn = join(claudeDir, 'tool-search.jsonl');
  copyFileSync(join(IMPORTER_FIXTURES, 'fixtures-claude-code', 'tool-search.jsonl'), torn);
  appendFileSync(torn, `${TORN_LINE}\n`);
  cpSync(join(IMPORTER_FIXTURES, 'fixtures-gemini-cli', 'tmp'), join(a, '.gemini', 'tmp'), { recursive: true });

  // desk-b: Codex, Qwen Code, Copilot CLI and one Claude Code session.
  const codexDir = join(b, '.codex', 'sessions', '2025', '10', '10');
  mkdirSync(codexDir, { recursive: true });
  const codexTemplate = join(dir, 'codex-template.jsonl');
  writeCodexRollout(codexTemplate, options.bytesPerSession, outputBytes);
  const codex = readFileSync(codexTemplate, 'utf8');
  rmSync(codexTemplate);
  for (let i = 0; i < options.sessions; i++) {
    const session = GENERATED_CODEX_SESSION.replace(/c0de$/, `b${i.toString(16).padStart(3, '0')}`);
    writeFileSync(join(codexDir, GENERATED_CODEX_FILE.replace(GENERATED_CODEX_SESSION, session)), codex.replaceAll(GENERATED_CODEX_SESSION, session));
  }
  cpSync(join(IMPORTER_FIXTURES, 'fixtures-qwen-code', 'projects'), join(b, '.qwen', 'projects'), { recursive: true });
  cpSync(join(IMPORTER_FIXTURES, 'fixtures-copilot-cli', 'session-state'), join(b, '.copilot', 'session-state'), { recursive: true });
  const bClaude = join(b, '.claude', 'projects', '-work-b');
  mkdirSync(bClaude, { recursive: true });
  deepSession(join(bClaude, 'deep.jsonl'), 200);

  return {
    machines: [
      { host: 'laptop-a', deviceId: 'dev-laptop-a', home: a, importers: ['claude-code', 'gemini-cli'], flags: ['--host', 'laptop-a', '--device-id', 'dev-laptop-a'], env: {} },
      { host: 'desk-b', deviceId: 'dev-desk-b', home: b, importers: ['codex', 'qwen-code', 'copilot-cli', 'claude-code'], flags: [], env: { TOOLCANON_HOST: 'desk-b', TOOLCANON_DEVICE_ID: 'dev-desk-b' } },
    ],
    malformed: 1,
  };
}

/**
 * The environment of one machine's `toolcanon import`: its HOME and naming, nothing from the
 * caller's (no harness overrides, no sink, no import state of the machine running the test).
 */
export function machineEnv(machine: Machine): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'], HOME: machine.home, ...machine.env };
}
