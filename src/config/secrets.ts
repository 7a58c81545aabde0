// Credentials come from the environment or from a file, never from the command line (every user
// of the machine can read a process's argv in /proc or `ps`), and never appear in a message:
// every secret read here is remembered so that the CLI can scrub it from anything it prints.
import { readFileSync } from 'node:fs';

/**
 * A setting from the environment or a file that cannot be used (a credential missing, unreadable
 * or given twice; a bad number): one line, exit 2, before any work.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Shorter values are not scrubbed from text (they would mangle ordinary words); say so in the docs. */
const MIN_SCRUBBED_LENGTH = 3;
const knownSecrets = new Set<string>();

/** Remembers a password (or key passphrase) so that scrubSecrets() removes it from any text. */
export function registerSecret(value: string | undefined): void {
  if (value !== undefined && value.length >= MIN_SCRUBBED_LENGTH) knownSecrets.add(value);
}

function reason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return String((error as Error).message ?? error);
}

/**
 * The text of a credential file (a password, or a PEM file when `binary`): a missing, unreadable
 * or empty file is a ConfigError naming the variable and the path (never the content). One
 * trailing newline is dropped from a password file (`echo pw > file` writes one).
 */
export function readSecretFile(variable: string, path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`$${variable}: cannot read ${path}: ${reason(error)}`);
  }
  const value = text.replace(/\r?\n$/, '');
  if (value === '') throw new ConfigError(`$${variable}: ${path} is empty`);
  return value;
}

/** A PEM file (CA, certificate, key) named by a variable: its bytes, or a ConfigError. */
export function readPemFile(variable: string, path: string): Buffer {
  try {
    const bytes = readFileSync(path);
    if (bytes.length === 0) throw new ConfigError(`$${variable}: ${path} is empty`);
    return bytes;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`$${variable}: cannot read ${path}: ${reason(error)}`);
  }
}

/**
 * A secret from `$NAME` or from the file `$NAME_FILE` (not both); undefined when neither is set.
 * The value is registered for scrubbing.
 */
export function secretFromEnv(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const direct = env[name];
  const file = env[`${name}_FILE`];
  if (direct !== undefined && direct !== '' && file !== undefined && file !== '') {
    throw new ConfigError(`set $${name} or $${name}_FILE, not both`);
  }
  const value = file !== undefined && file !== '' ? readSecretFile(`${name}_FILE`, file) : direct === '' ? undefined : direct;
  registerSecret(value);
  return value;
}

/** `scheme://user:password@` (or `scheme://user@`) in a URL: the part a message must never show. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi;

/** True when the text holds a URL with a user or password. */
export function hasUrlUserinfo(text: string): boolean {
  URL_USERINFO.lastIndex = 0;
  return URL_USERINFO.test(text);
}

/**
 * Text safe to print: URLs lose their user and password, and every registered secret becomes
 * `***`. Applied to every line the CLI writes to stderr.
 */
export function scrubSecrets(text: string): string {
  let out = text.replace(URL_USERINFO, '$1');
  for (const secret of knownSecrets) if (out.includes(secret)) out = out.split(secret).join('***');
  return out;
}

/** Forgets the registered secrets (tests). */
export function forgetSecrets(): void {
  knownSecrets.clear();
}
