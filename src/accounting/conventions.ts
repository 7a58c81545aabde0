// How each harness reports usage: whether input_tokens already includes cached tokens, and
// whether output_tokens already includes reasoning tokens. Sources: the research notes'
// cross-harness table (Claude Code transcripts, Codex rollouts, opencode storage, OTel GenAI).
import type { Harness } from '../canonical/meta.ts';
import { saturatingAdd } from './arithmetic.ts';

export interface UsageConvention {
  /** Claude Code: no (input_tokens excludes cache reads and writes). Codex / OpenAI: yes. */
  readonly inputIncludesCache: boolean;
  /** Codex / OpenAI and Claude (thinking): yes. opencode reports reasoning separately. */
  readonly outputIncludesReasoning: boolean;
  readonly note: string;
  /** The harness logs its figures rounded (Aider's `3.2k sent`): its usage rows are flagged `approximate`. */
  readonly approximate?: true;
}

export const USAGE_CONVENTIONS: Readonly<Record<Harness, UsageConvention>> = {
  claude_code: { inputIncludesCache: false, outputIncludesReasoning: true, note: 'Anthropic usage: input_tokens excludes cache_read/cache_creation; output includes thinking' },
  codex: { inputIncludesCache: true, outputIncludesReasoning: true, note: 'OpenAI usage: input_tokens includes cached_input_tokens; output includes reasoning_output_tokens' },
  opencode: { inputIncludesCache: false, outputIncludesReasoning: false, note: 'opencode tokens{input, output, reasoning, cache{read, write}}: separate buckets' },
  grok_build: { inputIncludesCache: true, outputIncludesReasoning: true, note: 'xAI usage follows OpenAI: prompt tokens include cached ones' },
  grok_build_concise: { inputIncludesCache: true, outputIncludesReasoning: true, note: 'as grok_build' },
  grok_build_hashline: { inputIncludesCache: true, outputIncludesReasoning: true, note: 'as grok_build' },
  memory: { inputIncludesCache: true, outputIncludesReasoning: true, note: 'capability module of Grok Build: as grok_build' },
  lsp: { inputIncludesCache: true, outputIncludesReasoning: true, note: 'capability module of Grok Build: as grok_build' },
  skills: { inputIncludesCache: true, outputIncludesReasoning: true, note: 'capability module of Grok Build: as grok_build' },
  mcp: { inputIncludesCache: true, outputIncludesReasoning: true, note: 'OTel GenAI convention: gen_ai.usage.input_tokens includes cached tokens' },
  gemini_cli: { inputIncludesCache: true, outputIncludesReasoning: false, note: 'Gemini usageMetadata: promptTokenCount includes cachedContentTokenCount; thoughtsTokenCount is apart from candidatesTokenCount' },
  // The importer writes output_tokens with the thoughts inside on both of Qwen Code's paths (src/importers/qwen-code/README.md).
  qwen_code: { inputIncludesCache: true, outputIncludesReasoning: true, note: 'Qwen Code usageMetadata from OpenAI-compatible providers: promptTokenCount = prompt_tokens (cached inside), candidatesTokenCount = completion_tokens (reasoning inside)' },
  copilot_cli: { inputIncludesCache: true, outputIncludesReasoning: true, note: 'Copilot CLI modelMetrics: inputTokens includes cacheReadTokens and cacheWriteTokens; outputTokens includes reasoningTokens' },
  // The importer takes the cache out of input on pi's Google paths, which keep it inside (src/importers/pi-agent/README.md).
  pi_agent: { inputIncludesCache: false, outputIncludesReasoning: true, note: 'pi-ai Usage {input, output, cacheRead, cacheWrite}: input excludes the cache buckets; output includes reasoning (Anthropic thinking, OpenAI reasoning, Google thoughts)' },
  openclaw: { inputIncludesCache: false, outputIncludesReasoning: true, note: "OpenClaw embeds pi's session manager: the same pi-ai Usage buckets as pi_agent" },
  // The importer writes the uncached input; Roo Code's and Kilo Code's total tokensIn is taken apart (src/importers/cline/README.md).
  cline: { inputIncludesCache: false, outputIncludesReasoning: true, note: 'Cline ClineApiReqInfo {tokensIn, tokensOut, cacheWrites, cacheReads}: tokensIn excludes the cache figures (context = their sum); tokensOut is the completion, reasoning inside' },
  roo_code: { inputIncludesCache: false, outputIncludesReasoning: true, note: 'Roo Code ClineApiReqInfo: tokensIn is the total input since 2025-10-31 (the provider\'s own before); the importer writes the uncached part' },
  kilo_code: { inputIncludesCache: false, outputIncludesReasoning: true, note: 'Kilo Code (a Roo Code fork): as roo_code' },
  // Both generations log kosong's TokenUsage (src/importers/kimi/README.md).
  kimi: { inputIncludesCache: false, outputIncludesReasoning: true, note: 'Kimi CLI / Kimi Code kosong TokenUsage {input_other, output, input_cache_read, input_cache_creation}: input_other excludes both cache buckets; output is the whole completion, reasoning inside' },
  // The importer moves a gpt-* thread's cache creation into input (src/importers/amp/README.md).
  amp: { inputIncludesCache: false, outputIncludesReasoning: true, note: 'Amp message usage {inputTokens, outputTokens, cacheReadInputTokens, cacheCreationInputTokens}: inputTokens excludes the cache (totalInputTokens = their sum); gpt-* threads log the uncached prompt as cache creation, written as input; output includes thinking' },
  // Droid logs session totals only: one usage per session (src/importers/droid/README.md).
  droid: { inputIncludesCache: false, outputIncludesReasoning: false, note: 'Factory Droid <session>.settings.json tokenUsage {inputTokens, outputTokens, cacheReadTokens, cacheCreationTokens, thinkingTokens}: session totals; input excludes the cache; thinking beside the output (as its readers take it; no source says)' },
  // The importer takes the cache read out of the ledger's input (src/importers/goose/README.md).
  goose: { inputIncludesCache: false, outputIncludesReasoning: true, note: 'Goose usage_ledger {input_tokens, output_tokens, cache_read_tokens, cache_write_tokens}: input_tokens includes the cache read (total = input + output); the importer writes input - cache read; output includes reasoning' },
  // Hermes keeps session totals only: one usage per session (src/importers/hermes/README.md).
  hermes_agent: { inputIncludesCache: false, outputIncludesReasoning: true, note: 'Hermes Agent sessions.{input,output,cache_read,cache_write,reasoning}_tokens: session totals, normalised by Hermes per provider (agent/usage_pricing.py normalize_usage): input excludes the cache; reasoning inside output (OpenAI completion_tokens)' },
  // Aider prints rounded figures (src/importers/aider/README.md): its rows are flagged approximate.
  aider: { inputIncludesCache: false, outputIncludesReasoning: true, approximate: true, note: 'Aider `> Tokens: <sent> sent, [<w> cache write, <h> cache hit,] <r> received`: sent is the whole prompt (the importer writes sent - cache figures); figures rounded to 1.2k / 13k by format_tokens: approximate' },
  // The importer takes the cached part out of an OpenAI-style prompt_tokens (src/importers/codebuff/README.md).
  codebuff: { inputIncludesCache: false, outputIncludesReasoning: true, note: 'Codebuff assistant message usage: inputTokens with cacheReadInputTokens / cacheCreationInputTokens apart (Anthropic), or prompt_tokens with prompt_tokens_details.cached_tokens inside (OpenAI: written without it); output includes reasoning' },
};

export interface ObservedFigures {
  readonly inputTokens: bigint;
  readonly outputTokens: bigint;
  readonly cacheReadTokens: bigint;
  readonly cacheWriteTokens: bigint;
  readonly reasoningTokens: bigint;
}

/**
 * What occupied the context window after the request: all input (cached or not) plus the
 * response (reasoning included), the figure agent runtimes compare with the window when they
 * decide to compact (Claude Code: input + cache_creation + cache_read + output; Codex:
 * last_token_usage.total_tokens).
 */
export function normaliseContextTokens(harness: Harness, f: ObservedFigures): { inputTotal: bigint; contextTokens: bigint } {
  const c = USAGE_CONVENTIONS[harness];
  // Each figure is a u64; their sums saturate at 2^64 - 1 as the threshold arithmetic does.
  const inputTotal = c.inputIncludesCache ? f.inputTokens : saturatingAdd(f.inputTokens, f.cacheReadTokens, f.cacheWriteTokens);
  const outputTotal = c.outputIncludesReasoning ? f.outputTokens : saturatingAdd(f.outputTokens, f.reasoningTokens);
  return { inputTotal, contextTokens: saturatingAdd(inputTotal, outputTotal) };
}
