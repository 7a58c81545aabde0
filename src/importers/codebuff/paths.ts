// Where Codebuff keeps its chats, and which files under a path are chat message files.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { existingOrFirst } from '../cline/paths.ts';
import { listFilesUnder } from '../files.ts';

/** The chat file (`chats/<chat id>/chat-messages.json`). */
export const CHAT_MESSAGES = 'chat-messages.json';

/** Codebuff's release channels, each its own config folder (formerly "manicode"). */
export const CHANNELS = ['manicode', 'manicode-dev', 'manicode-staging'] as const;

/**
 * Codebuff's project folders: `~/.config/<channel>/projects` on every OS (`os.homedir()`), for the
 * channels manicode (release), manicode-dev and manicode-staging, the existing ones (else the
 * first). From its readers: ryoppippi/ccusage @ 5816e640 rust/crates/ccusage/src/adapter/codebuff/paths.rs,
 * kenn-io/agentsview @ 53860074 internal/parser/codebuff.go (DefaultDirs `.config/manicode/projects`).
 */
export function defaultCodebuffPaths(home: string = homedir(), exists: (p: string) => boolean = existsSync): string[] {
  return existingOrFirst(CHANNELS.map((c) => join(home, '.config', c, 'projects')), exists);
}

/** True for a chat file a walk reads: `chats/<chat id>/chat-messages.json`. */
export function isChatFile(path: string): boolean {
  return basename(path) === CHAT_MESSAGES && basename(dirname(dirname(path))) === 'chats';
}

export function listCodebuffFiles(paths: readonly string[]): string[] {
  return listFilesUnder(paths, (path) => isChatFile(path));
}

/** A chat's session id, `<channel>/<project>/<chat id>`, from `<channel>/projects/<project>/chats/<chat id>/chat-messages.json`. */
export function sessionOf(path: string): { sessionId: string; chatId: string } {
  const chatDir = dirname(path);
  const chatId = basename(chatDir) || 'unknown';
  const project = basename(dirname(dirname(chatDir))) || 'unknown';
  const channel = basename(dirname(dirname(dirname(dirname(chatDir))))) || 'manicode';
  return { sessionId: `${channel}/${project}/${chatId}`.slice(0, 256), chatId };
}

/** The time a chat id names (`2025-12-20T12-00-00.000Z`: the time's `:` written as `-`), or undefined. */
export function chatIdTime(chatId: string): string | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})(\.\d+)?Z$/.exec(chatId);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1] ?? ''}T${m[2] ?? ''}:${m[3] ?? ''}:${m[4] ?? ''}${m[5] ?? ''}Z`);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}
