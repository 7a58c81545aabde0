// Where OpenClaw keeps its session transcripts, and which files under a path are transcripts.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { listFilesUnder } from '../files.ts';
import { isTranscriptName, sessionOfName } from './types.ts';

/** Legacy state directories, tried in OpenClaw's order when ~/.openclaw does not exist. */
const LEGACY_STATE_DIRS = ['.clawdbot', '.moldbot', '.moltbot'] as const;

/**
 * The state directory (openclaw/openclaw src/config/paths.ts `resolveStateDir`):
 * `$OPENCLAW_STATE_DIR`, else `$CLAWDBOT_STATE_DIR` (a leading `~` expanded), else
 * `~/.openclaw`, else the first legacy directory that exists. The home is `$OPENCLAW_HOME` when
 * set. Transcripts are in `agents/<agent id>/sessions/` below it.
 */
export function defaultOpenclawPaths(env: NodeJS.ProcessEnv = process.env, home: string = homedir(), exists: (p: string) => boolean = existsSync): string[] {
  const base = env['OPENCLAW_HOME']?.trim() || home;
  const override = env['OPENCLAW_STATE_DIR']?.trim() || env['CLAWDBOT_STATE_DIR']?.trim();
  if (override) return [resolve(override === '~' ? base : override.startsWith('~/') ? join(base, override.slice(2)) : override)];
  const current = join(base, '.openclaw');
  if (exists(current)) return [current];
  const legacy = LEGACY_STATE_DIRS.map((d) => join(base, d)).find((d) => exists(d));
  return [legacy ?? current];
}

/** True for a transcript a directory walk reads: a transcript name in a `sessions/` folder. */
export function isTranscript(path: string): boolean {
  return basename(dirname(path)) === 'sessions' && isTranscriptName(basename(path));
}

/** The transcripts under the paths, sorted; a path naming a file is read whatever its name. */
export function listOpenclawFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (path) => isTranscript(path));
}

/** The session of a file without a readable header, from OpenClaw's file names. */
export function sessionOfFile(path: string): string {
  return sessionOfName(basename(path));
}
