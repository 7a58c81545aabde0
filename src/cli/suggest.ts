// "Did you mean …?": the nearest known word to a mistyped command, flag or value, and the
// parser's errors (node:util parseArgs) said in one line with that suggestion.
import { UsageError } from './io.ts';

/**
 * Edit distance with adjacent transpositions counted as one edit (optimal string alignment):
 * `repaly` is one edit from `replay`, `fromat` one from `format`.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_r, i) => Array.from({ length: b.length + 1 }, (_c, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      let best = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = best;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/**
 * The candidate nearest to `word` (case ignored), when it is near enough to be what was meant:
 * at most a third of the word's length in edits (at least one, at most three), or a candidate
 * the word is a prefix of. Ties go to the first candidate.
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  if (w === '') return undefined;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  const limit = Math.min(3, Math.max(1, Math.floor(w.length / 3)));
  if (best !== undefined && bestDistance <= limit) return best;
  if (w.length >= 3) return candidates.find((c) => c.toLowerCase().startsWith(w));
  return undefined;
}

/** ": did you mean X?" when a candidate is near `word`, else ''. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const n = nearest(word, candidates);
  return n === undefined ? '' : `: did you mean ${n}?`;
}

/** The option names of a parseArgs configuration as typed: `--format`, `-h`. */
function flagNames(options: Readonly<Record<string, { readonly short?: string | undefined }>>): string[] {
  return Object.entries(options).flatMap(([name, o]) => [`--${name}`, ...(o.short === undefined ? [] : [`-${o.short}`])]);
}

/**
 * A parseArgs failure as a one-line UsageError: `unknown option --fromat: did you mean
 * --format?`, `--format needs a value`; never the parser's own text (which quotes the option
 * with an unbalanced quote and suggests `--`).
 */
export function parseArgsUsageError(error: unknown, options: Readonly<Record<string, { readonly short?: string | undefined; readonly type?: string }>>, command?: string): UsageError {
  const e = error as { code?: unknown; message?: unknown };
  const message = String(e.message ?? error);
  const where = command === undefined ? '' : ` for ${command}`;
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /^Unknown option '([^']*)'/.exec(message)?.[1] ?? message;
    const name = flag.split('=')[0] ?? flag;
    return new UsageError(`unknown option ${name}${where}${didYouMean(name, flagNames(options))}`);
  }
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = /Option '(-\w, )?(--[\w-]+)/.exec(message)?.[2];
    if (flag !== undefined) {
      const o = options[flag.slice(2)];
      return new UsageError(o?.type === 'boolean' ? `${flag} takes no value` : `${flag} needs a value`);
    }
  }
  return new UsageError(message.split('\n')[0]?.replace(/\. To specify a positional argument.*$/, '') ?? message);
}
