// What tokens cost: the shipped price table per model (USD per million tokens, each price with the
// date it was checked and its source), overridable with --prices FILE (the same format, laid over
// the shipped table model by model), and the exact arithmetic of a cost in integer pico-dollars.
//
// A model matches its own name, or its name followed by a dated snapshot suffix
// (claude-sonnet-4-5-20250929, gpt-5-2025-08-07, o4-mini-2025-04-16, grok-4-0709), after dropping a provider
// prefix ("openai/gpt-5"). Unlike the context-window table no other suffix matches: gpt-5-mini
// and gpt-5-pro are other models at other prices, so gpt-5's price must not reach them. A model
// the table does not know has no cost (shown as unknown and flagged), never a cost of zero.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** One model's prices in USD per million tokens, as written in the table and in a --prices file. */
export interface ModelPrice {
  /** Uncached input. */
  readonly input: number;
  /** Cached input read (Anthropic "cache hits", OpenAI "cached input"). */
  readonly cache_read: number;
  /** Cache write (Anthropic's 5-minute cache write; the input price where writes are not billed apart). */
  readonly cache_write: number;
  readonly output: number;
  /** Reasoning tokens, where billed apart from output; absent: billed as output. */
  readonly reasoning?: number | undefined;
  /**
   * The prices apply to requests whose prompt (all input, cached or not) is at most this many
   * tokens; a longer request is priced by `long_context`, or has no known cost without it.
   */
  readonly max_prompt_tokens?: number | undefined;
  readonly long_context?: Omit<ModelPrice, 'max_prompt_tokens' | 'long_context' | 'date' | 'source' | 'note'> | undefined;
  /** The day the price was checked against the source (YYYY-MM-DD). */
  readonly date?: string | undefined;
  readonly source?: string | undefined;
  readonly note?: string | undefined;
}

export type PriceFile = Readonly<Record<string, ModelPrice>>;

const ANTHROPIC = 'https://platform.claude.com/docs/en/about-claude/pricing';
const ANTHROPIC_NOTE = 'Standard API prices; cache writes at the 5-minute rate (see docs/report-html.md); requests over 200k prompt tokens (1M-context long-context pricing) are not priced';
const CHECKED = '2026-12-03';

/**
 * The shipped table. Models whose price could not be confirmed from a published page are left
 * out on purpose (xAI grok-4 / grok-code-fast-1, Google Gemini): they show as unknown.
 */
export const SHIPPED_PRICES: Readonly<Record<string, ModelPrice & { readonly date: string; readonly source: string }>> = {
  // Anthropic: base input, 5m cache writes, cache hits and refreshes, output (the pricing page's
  // model table). Thinking is billed as output and included in output_tokens.
  'claude-opus-4-6': { input: 5, cache_read: 0.5, cache_write: 6.25, output: 25, max_prompt_tokens: 200_000, date: CHECKED, source: ANTHROPIC, note: ANTHROPIC_NOTE },
  'claude-opus-4-5': { input: 5, cache_read: 0.5, cache_write: 6.25, output: 25, max_prompt_tokens: 200_000, date: CHECKED, source: ANTHROPIC, note: ANTHROPIC_NOTE },
  'claude-opus-4-1': { input: 15, cache_read: 1.5, cache_write: 18.75, output: 75, max_prompt_tokens: 200_000, date: CHECKED, source: ANTHROPIC, note: ANTHROPIC_NOTE },
  'claude-opus-4': { input: 15, cache_read: 1.5, cache_write: 18.75, output: 75, max_prompt_tokens: 200_000, date: CHECKED, source: ANTHROPIC, note: ANTHROPIC_NOTE },
  'claude-sonnet-4-6': { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15, max_prompt_tokens: 200_000, date: CHECKED, source: ANTHROPIC, note: ANTHROPIC_NOTE },
  'claude-sonnet-4-5': { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15, max_prompt_tokens: 200_000, date: CHECKED, source: ANTHROPIC, note: ANTHROPIC_NOTE },
  'claude-sonnet-4': { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15, max_prompt_tokens: 200_000, date: CHECKED, source: ANTHROPIC, note: ANTHROPIC_NOTE },
  'claude-3-7-sonnet': { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15, max_prompt_tokens: 200_000, date: CHECKED, source: ANTHROPIC, note: ANTHROPIC_NOTE },
  'claude-haiku-4-5': { input: 1, cache_read: 0.1, cache_write: 1.25, output: 5, max_prompt_tokens: 200_000, date: CHECKED, source: ANTHROPIC, note: ANTHROPIC_NOTE },
  'claude-3-5-haiku': { input: 0.8, cache_read: 0.08, cache_write: 1, output: 4, max_prompt_tokens: 200_000, date: CHECKED, source: ANTHROPIC, note: ANTHROPIC_NOTE },
  // OpenAI: input, cached input, output (standard tier). Reasoning tokens are billed as output and
  // included in output_tokens; cache writes are not billed apart (the input price).
  'gpt-5-codex': { input: 1.25, cache_read: 0.125, cache_write: 1.25, output: 10, date: CHECKED, source: 'https://developers.openai.com/api/docs/models/gpt-5-codex' },
  'gpt-5': {
    input: 1.25, cache_read: 0.125, cache_write: 1.25, output: 10, date: CHECKED, source: 'https://developers.openai.com/api/docs/models/gpt-5-codex',
    note: 'GPT-5 is listed beside GPT-5-Codex at the same prices on that page (input $1.25); cached $0.125 and output $10 as GPT-5-Codex, as third-party tables of the OpenAI pricing page agree',
  },
  'gpt-5.1-codex': {
    input: 1.25, cache_read: 0.125, cache_write: 1.25, output: 10, date: CHECKED, source: 'https://fernando-nog.netlify.app/gpt-coding-model-costs-2026/',
    note: 'a dated copy of the OpenAI pricing page (2026-05-05); OpenRouter lists the same $1.25 / $10',
  },
  'gpt-5.1': {
    input: 1.25, cache_read: 0.125, cache_write: 1.25, output: 10, date: CHECKED, source: 'https://fernando-nog.netlify.app/gpt-coding-model-costs-2026/',
    note: 'a dated copy of the OpenAI pricing page (2026-05-05)',
  },
  'gpt-5-mini': { input: 0.25, cache_read: 0.025, cache_write: 0.25, output: 2, date: CHECKED, source: 'https://github.com/github/docs/blob/main/data/tables/copilot/models-and-pricing.yml' },
  'o4-mini': {
    input: 1.1, cache_read: 0.275, cache_write: 1.1, output: 4.4, date: CHECKED, source: 'https://www.helicone.ai/model/o4-mini',
    note: 'the openai provider row; the same $1.10 / $0.275 / $4.40 in the Roo-Code model table citing platform.openai.com/docs/models/o4-mini',
  },
};

/** Micro-dollars per million tokens = pico-dollars per token: the integer unit of every price. */
export interface MicroPrice {
  readonly input: bigint;
  readonly cacheRead: bigint;
  readonly cacheWrite: bigint;
  readonly output: bigint;
  readonly reasoning: bigint;
}

export interface ResolvedPrice {
  /** The table key the model matched. */
  readonly key: string;
  readonly base: MicroPrice;
  /** Absent: no prompt limit. */
  readonly maxPromptTokens?: bigint;
  /** The prices above maxPromptTokens; absent: unknown. */
  readonly longContext?: MicroPrice;
}

/** Dollars per million tokens (at most 6 decimals) as integer micro-dollars per million tokens. */
export function toMicroDollars(usd: number, what: string): bigint {
  const micro = Math.round(usd * 1e6);
  if (!Number.isFinite(usd) || usd < 0 || Math.abs(usd * 1e6 - micro) > 1e-6 * Math.max(1, micro)) {
    throw new Error(`${what}: a price must be a non-negative number of dollars with at most 6 decimals, got ${usd}`);
  }
  return BigInt(micro);
}

function microPrice(p: Omit<ModelPrice, 'max_prompt_tokens' | 'long_context'>, what: string): MicroPrice {
  const output = toMicroDollars(p.output, `${what}.output`);
  return {
    input: toMicroDollars(p.input, `${what}.input`),
    cacheRead: toMicroDollars(p.cache_read, `${what}.cache_read`),
    cacheWrite: toMicroDollars(p.cache_write, `${what}.cache_write`),
    output,
    reasoning: p.reasoning === undefined ? output : toMicroDollars(p.reasoning, `${what}.reasoning`),
  };
}

/** Billable token counts of one group of requests, each kind once (see billableTokensSql). */
export interface BillableTokens {
  readonly input: bigint;
  readonly cacheRead: bigint;
  readonly cacheWrite: bigint;
  readonly output: bigint;
  /** Reasoning tokens not already counted in output (opencode). */
  readonly reasoning: bigint;
}

/** The exact cost in pico-dollars (1e-12 USD): tokens times micro-dollars per million tokens. */
export function costPicoDollars(t: BillableTokens, p: MicroPrice): bigint {
  return t.input * p.input + t.cacheRead * p.cacheRead + t.cacheWrite * p.cacheWrite + t.output * p.output + t.reasoning * p.reasoning;
}

/** Pico-dollars rounded half up to micro-dollars, as a decimal string of dollars ("12.345678"). */
export function formatUsd(picoDollars: bigint): string {
  const micro = (picoDollars + 500_000n) / 1_000_000n;
  const whole = micro / 1_000_000n;
  const frac = (micro % 1_000_000n).toString().padStart(6, '0');
  return `${whole}.${frac}`;
}

const DATED_SUFFIX = /^-(?:\d{8}|\d{4}-\d{2}-\d{2}|\d{4})$/;

/** The schema of a --prices file; zod is loaded only when a file is given (start-up cost). */
function priceFileSchema(): import('zod').ZodType<Record<string, ModelPrice>> {
  const { z } = createRequire(import.meta.url)('zod') as typeof import('zod');
  const usd = z.number().nonnegative();
  const prices = { input: usd, cache_read: usd, cache_write: usd, output: usd, reasoning: usd.optional() };
  return z.record(
    z.string().min(1),
    z.object({
      ...prices,
      max_prompt_tokens: z.number().int().positive().optional(),
      long_context: z.object(prices).strict().optional(),
      date: z.string().optional(),
      source: z.string().optional(),
      note: z.string().optional(),
    }).strict(),
  ) as import('zod').ZodType<Record<string, ModelPrice>>;
}

export class PriceTable {
  private readonly entries: ReadonlyMap<string, ResolvedPrice>;
  /** Every entry as written (the shipped table with the user's file laid over it). */
  readonly table: PriceFile;

  constructor(table: PriceFile = SHIPPED_PRICES) {
    this.table = table;
    this.entries = new Map(
      Object.entries(table).map(([key, p]) => {
        const resolved: ResolvedPrice = {
          key,
          base: microPrice(p, key),
          ...(p.max_prompt_tokens === undefined ? {} : { maxPromptTokens: BigInt(p.max_prompt_tokens) }),
          ...(p.long_context === undefined ? {} : { longContext: microPrice(p.long_context, `${key}.long_context`) }),
        };
        return [key, resolved];
      }),
    );
  }

  /** The shipped table with a user's --prices file laid over it (a model's entry replaced whole). */
  static withOverrides(file: string | undefined): PriceTable {
    return file === undefined ? new PriceTable() : PriceTable.withOverridesText(readPricesFile(file), file);
  }

  /** withOverrides of a --prices file's text (`file` names it in errors). */
  static withOverridesText(text: string, file: string): PriceTable {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new Error(`${file}: cannot read the price table: ${(error as Error).message}`);
    }
    const result = priceFileSchema().safeParse(parsed);
    if (!result.success) {
      const issue = result.error.issues[0];
      throw new Error(`${file}: a price table maps model names to { input, cache_read, cache_write, output, reasoning?, max_prompt_tokens?, long_context?, date?, source?, note? } in USD per million tokens (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'})`);
    }
    try {
      return new PriceTable({ ...SHIPPED_PRICES, ...result.data });
    } catch (error) {
      throw new Error(`${file}: ${(error as Error).message}`);
    }
  }

  /**
   * Every prompt limit of the table (max_prompt_tokens), each once: a model's own limit is one
   * of them, so a query can say per request whether its prompt is above each, and the price band
   * is picked per model afterwards (report usage, the statusline's cost of the day).
   */
  promptLimits(): bigint[] {
    return [...new Set(Object.keys(this.table).flatMap((key) => {
      const limit = this.resolve(key)?.maxPromptTokens;
      return limit === undefined ? [] : [limit];
    }))];
  }

  /**
   * The prices of a group of requests of `model` and the band they are billed by: `above` says,
   * for each of `limits` (promptLimits()), whether their prompt was above it (as a query returns
   * it), and the model's own limit picks the base or the long-context prices. `band` undefined:
   * no price (no price for the model, or above its limit with no long-context prices).
   */
  bandOf(model: string, limits: readonly bigint[], above: readonly (number | boolean | string)[]): { readonly price: ResolvedPrice | undefined; readonly band: MicroPrice | undefined } {
    const price = this.resolve(model);
    if (price === undefined) return { price, band: undefined };
    const at = price.maxPromptTokens === undefined ? -1 : limits.indexOf(price.maxPromptTokens);
    const flag = at < 0 ? false : above[at];
    const isAbove = flag === true || flag === 1 || flag === '1' || flag === 'true';
    return { price, band: isAbove ? price.longContext : price.base };
  }

  /** The prices of a model, or undefined when the table does not know it. */
  resolve(model: string): ResolvedPrice | undefined {
    const name = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
    const exact = this.entries.get(name);
    if (exact) return exact;
    for (const [key, price] of this.entries) {
      if (name.startsWith(key) && DATED_SUFFIX.test(name.slice(key.length))) return price;
    }
    return undefined;
  }
}

/** The text of a --prices file (a one-line error naming it when it cannot be read). */
export function readPricesFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`${file}: cannot read the price table: ${(error as Error).message}`);
  }
}
