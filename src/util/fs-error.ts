// A file-system error as the words of a one-line message (never the error object's dump).

/** The error's `code` (`ENOENT`, `EACCES`, …), if it has one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

const WORDS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EISDIR: 'it is a folder',
  ENOTDIR: 'a parent is not a directory',
  ENOENT: 'no such file or directory',
};

/**
 * What went wrong, in a few words: the usual codes said plainly (`overrides` words them for the
 * caller's context), anything else the first line of the error's own message.
 */
export function describeFsError(error: unknown, overrides: Readonly<Record<string, string>> = {}): string {
  const code = errorCode(error);
  if (code !== undefined) {
    const words = overrides[code] ?? WORDS[code];
    if (words !== undefined) return words;
  }
  return String((error as Error | null)?.message ?? error).split('\n')[0] ?? 'failed';
}
