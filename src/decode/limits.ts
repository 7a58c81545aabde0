// The decoder's default limits, apart from the decoder: the command line's help and flags read them.
import type { DecodeLimits } from './event.ts';

export const DEFAULT_LIMITS: DecodeLimits = { maxEventBytes: 4 * 1024 * 1024, maxDepth: 128 };
