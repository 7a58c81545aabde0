// Where Claude Code keeps its transcripts, and which files under a path are transcripts.
import { statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { InputError } from '../../source/file.ts';
import { byCodeUnits, walkFiles } from '../../util/walk.ts';

/**
 * `$CLAUDE_CONFIG_DIR/projects` when the variable is set (Claude Code moves its whole
 * configuration directory there). Otherwise `~/.claude/projects` and `~/.config/claude/projects`,
 * those that exist (the XDG location some 1.0.x builds used, which ccusage also reads).
 */
export function defaultProjectsDirs(env: NodeJS.ProcessEnv = process.env, home: string = homedir(), isDirectory: (path: string) => boolean = isDirectoryPath): string[] {
  const configDir = env['CLAUDE_CONFIG_DIR']?.trim();
  if (configDir) return [join(resolve(configDir), 'projects')];
  const classic = join(home, '.claude', 'projects');
  const found = [classic, join(home, '.config', 'claude', 'projects')].filter((dir) => isDirectory(dir));
  // With neither present, name the classic location so the error message points at it.
  return found.length > 0 ? found : [classic];
}

function isDirectoryPath(path: string): boolean {
  return statOrUndefined(path)?.isDirectory() ?? false;
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Every `*.jsonl` under the paths (a path may also name a file), absolute, sorted by code
 * units and without duplicates. This includes `<session>/subagents/agent-*.jsonl`. Symbolic
 * links are followed (each directory once, so a link loop ends).
 */
export function listTranscriptFiles(paths: readonly string[]): string[] {
  const files = new Set<string>();
  const walk = (dir: string): void => {
    for (const full of walkFiles(dir, (_, name) => name.endsWith('.jsonl'))) files.add(full);
  };
  for (const p of paths) {
    const full = resolve(p);
    const stat = statOrUndefined(full);
    if (stat === undefined) throw new InputError(`${p}: no such file or directory (Claude Code transcripts are under $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)`);
    if (stat.isDirectory()) walk(full);
    else files.add(full);
  }
  return [...files].sort(byCodeUnits);
}

/**
 * The session a transcript belongs to, for lines that carry no `sessionId`: the file stem of
 * `<session>.jsonl`, or `<session>` for `<session>/subagents/agent-*.jsonl` (a subagent's work
 * belongs to the session that started it; its lines carry that session's id too).
 */
export function fallbackSessionId(path: string): string {
  const dir = dirname(path);
  if (basename(dir) === 'subagents') return basename(dirname(dir));
  const stem = basename(path).replace(/\.jsonl$/, '');
  return stem === '' ? 'unknown' : stem;
}
