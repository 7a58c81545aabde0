// The one hashing helper: SHA-256 as hex, and the 32-hex ids built from fields joined by NUL
// (event, breach, state, registration and dead-letter ids; the hash in a redaction marker).
import * as crypto from 'node:crypto';

/** One-shot hashing (Node >= 20.12) skips a Hash object per call; older 20.x fall back. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: Uint8Array | string, encoding: 'hex') => string }).hash;

/** The first `chars` hex digits of SHA-256 of `data` (a string is hashed as UTF-8). */
export function sha256Hex(data: Uint8Array | string, chars = 64): string {
  const hex = oneShotHash ? oneShotHash('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex');
  return chars >= 64 ? hex : hex.slice(0, chars);
}

/** A deterministic 32-hex id of the given fields, in order, joined by NUL (no field contains one). */
export function idOf(...fields: readonly string[]): string {
  return sha256Hex(fields.join('\u0000'), 32);
}
