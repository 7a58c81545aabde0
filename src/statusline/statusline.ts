// Claude Code's status line: what the session's context holds against its window and threshold
// (SPEC §5, through the accounting's own functions), and what the session and the day cost (the
// price table, exactly as `report usage` prices a request). It runs on every prompt, so it loads
// no engine: it reads the transcript Claude Code names on stdin, from where it stopped the last
// time (a small cache per transcript in the state directory), and only the assistant lines that
// carry a usage. Today's cost is the day's in the database when a running watch or serve owns it
// (statusline/today.ts: one plain HTTP query to that owner), else the caches' of today.
//
// One API response is written over several lines (one per content block) sharing message.id and
// requestId; early lines carry a partial output count. As the importer does
// (src/importers/claude-code/parser.ts), a response counts once, with the usage of its line with
// the largest output count (ties: the later line); Claude Code's `<synthetic>` messages (API
// errors, interrupts) were never metered and lines without a message id cannot be deduplicated:
// both are left out.
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { exceedsThresholdWithHeadroom, saturatingMul, saturatingSub, usagePercentage } from '../accounting/arithmetic.ts';
import { normaliseContextTokens } from '../accounting/conventions.ts';
import type { ModelTable } from '../accounting/models.ts';
import { costPicoDollars, formatUsd, type PriceTable } from '../cost/prices.ts';
import { toUsage } from '../importers/claude-code/types.ts';

/** What Claude Code passes on stdin (the members read here; others are ignored). */
export interface StatuslineInput {
  readonly session_id: string;
  readonly transcript_path?: string | undefined;
  readonly model?: { readonly id?: string; readonly display_name?: string } | undefined;
  readonly workspace?: { readonly current_dir?: string } | undefined;
}

/** Bad stdin: the command prints its message as one line and exits 2. */
export class StatuslineInputError extends Error {
  override readonly name = 'StatuslineInputError';
}

export function parseStatuslineInput(text: string): StatuslineInput {
  if (text.trim() === '') throw new StatuslineInputError("statusline reads the JSON Claude Code passes on stdin, and stdin was empty (set it as Claude Code's statusLine command)");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StatuslineInputError(`statusline: stdin is not JSON (${(error as Error).message.replace(/\s+/g, ' ')}); expected Claude Code's status line object { session_id, transcript_path, model, … }`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new StatuslineInputError(`statusline: stdin is JSON but not an object; expected Claude Code's status line object { session_id, transcript_path, model, … }`);
  const o = value as Record<string, unknown>;
  if (typeof o['session_id'] !== 'string' || o['session_id'] === '') throw new StatuslineInputError('statusline: stdin has no session_id (a string); expected Claude Code\'s status line object { session_id, transcript_path, model, … }');
  const path = o['transcript_path'];
  if (path !== undefined && path !== null && typeof path !== 'string') throw new StatuslineInputError(`statusline: transcript_path is ${typeof path}, not a string`);
  const model = o['model'];
  if (model !== undefined && model !== null && (typeof model !== 'object' || Array.isArray(model))) throw new StatuslineInputError('statusline: model is not an object { id, display_name }');
  return value as StatuslineInput;
}

/** One response's figures: model, UTC day, input, output, cache read, cache write. */
type Response = [model: string, day: string, input: number, output: number, cacheRead: number, cacheWrite: number];

/** What is kept of a transcript between runs. */
interface TranscriptCache {
  readonly version: 1;
  readonly path: string;
  readonly ino: number;
  /** Bytes read: up to the end of the last complete line. */
  offset: number;
  /** Every response of the file by message id and request id. */
  readonly responses: Record<string, Response>;
  /** The last main-thread response with a usage (the context after it). */
  last: string | undefined;
}

const CACHE_VERSION = 1;

/** Where the caches live: $TOOLCANON_STATUSLINE_DIR, else ~/.toolcanon/statusline. */
export function statuslineDir(env: NodeJS.ProcessEnv = process.env): string {
  return env['TOOLCANON_STATUSLINE_DIR'] ?? join(env['HOME'] ?? '.', '.toolcanon', 'statusline');
}

function cacheFile(dir: string, path: string): string {
  return join(dir, `${createHash('sha1').update(path).digest('hex').slice(0, 20)}.json`);
}

function loadCache(file: string, path: string, ino: number, size: number): TranscriptCache {
  const fresh: TranscriptCache = { version: CACHE_VERSION, path, ino, offset: 0, responses: {}, last: undefined };
  try {
    const c = JSON.parse(readFileSync(file, 'utf8')) as TranscriptCache;
    // Another file under the name, or one that shrank: read from the start.
    if (c.version !== CACHE_VERSION || c.path !== path || c.ino !== ino || c.offset > size || typeof c.responses !== 'object') return fresh;
    return c;
  } catch {
    return fresh;
  }
}

function saveCache(file: string, cache: TranscriptCache): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(cache), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // A cache that cannot be written only costs the next run a longer read.
  }
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0;
}

/** Reads one assistant line into the cache (what the importer takes of it; anything else is passed over). */
function readLine(text: string, cache: TranscriptCache): void {
  // Only assistant lines with a usage matter: the rest is not parsed at all.
  if (!text.includes('"usage"') || !text.includes('"assistant"')) return;
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return;
  }
  if (record['type'] !== 'assistant') return;
  const message = record['message'];
  if (typeof message !== 'object' || message === null) return;
  const m = message as Record<string, unknown>;
  const usage = toUsage(m['usage']);
  const model = typeof m['model'] === 'string' ? m['model'] : '';
  const id = m['id'];
  if (usage === undefined || model === '<synthetic>' || typeof id !== 'string' || id === '') return;
  const requestId = typeof record['requestId'] === 'string' ? record['requestId'] : '';
  const key = `${id}\u0000${requestId}`;
  const seen = cache.responses[key];
  const ts = typeof record['timestamp'] === 'string' ? record['timestamp'] : '';
  const day = seen?.[1] ?? (Number.isFinite(Date.parse(ts)) ? new Date(Date.parse(ts)).toISOString().slice(0, 10) : '');
  if (seen === undefined || usage.output_tokens >= seen[3]) {
    cache.responses[key] = [model, day, usage.input_tokens, usage.output_tokens, count(usage.cache_read_input_tokens), count(usage.cache_creation_input_tokens)];
  }
  // The context is the main thread's: a subagent's (sidechain) request has its own window.
  const agent = record['agentId'];
  if (record['isSidechain'] !== true && (typeof agent !== 'string' || agent === '')) cache.last = key;
}

/** Reads what the transcript gained since the cache's offset (complete lines only: a line being written waits). */
function advance(path: string, cache: TranscriptCache, size: number): void {
  if (cache.offset >= size) return;
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    let carry: Buffer | undefined;
    let pos = cache.offset;
    while (pos < size) {
      const n = readSync(fd, chunk, 0, Math.min(chunk.length, size - pos), pos);
      if (n === 0) break;
      let data = chunk.subarray(0, n);
      const dataStart = pos - (carry?.length ?? 0);
      if (carry) data = Buffer.concat([carry, data]);
      pos += n;
      let start = 0;
      for (let nl = data.indexOf(0x0a, start); nl >= 0; nl = data.indexOf(0x0a, start)) {
        readLine(data.toString('utf8', start, nl), cache);
        start = nl + 1;
        cache.offset = dataStart + start;
      }
      carry = start < data.length ? Buffer.from(data.subarray(start)) : undefined;
    }
  } finally {
    closeSync(fd);
  }
}

export interface TranscriptReading {
  /** The transcript and its subagents' transcripts, each response once. */
  readonly responses: readonly Response[];
  /** The last main-thread response (the context now), undefined before the first. */
  readonly last: Response | undefined;
}

/** Reads a transcript (and its subagents' transcripts, which bill to the same session) through the caches in `dir`. */
export function readTranscript(path: string, dir: string): TranscriptReading | undefined {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return undefined;
  }
  const files = [path];
  // <project>/<session>.jsonl has its subagents in <project>/<session>/subagents/agent-*.jsonl.
  const subagents = join(dirname(path), basename(path, '.jsonl'), 'subagents');
  try {
    for (const name of readdirSync(subagents).sort()) if (name.endsWith('.jsonl')) files.push(join(subagents, name));
  } catch {
    // no subagents
  }
  const responses: Response[] = [];
  let last: Response | undefined;
  for (const file of files) {
    const s = file === path ? stat : statOrUndefined(file);
    if (s === undefined) continue;
    const cf = cacheFile(dir, file);
    const cache = loadCache(cf, file, s.ino, s.size);
    const before = cache.offset;
    advance(file, cache, s.size);
    if (cache.offset !== before || before === 0) saveCache(cf, cache);
    responses.push(...Object.values(cache.responses));
    if (file === path && cache.last !== undefined) last = cache.responses[cache.last];
  }
  return { responses, last };
}

function statOrUndefined(path: string): { ino: number; size: number } | undefined {
  try {
    const s = statSync(path);
    return { ino: s.ino, size: s.size };
  } catch {
    return undefined;
  }
}

/** The day's responses over every transcript cache written today (the sessions that showed the status line). */
export function cachedResponsesOf(dir: string, day: string): Response[] {
  const out: Response[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  const since = Date.parse(`${day}T00:00:00Z`);
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const file = join(dir, name);
    try {
      const fd = openSync(file, 'r');
      let text: string;
      try {
        if (fstatSync(fd).mtimeMs < since) continue;
        text = readFileSync(fd, 'utf8');
      } finally {
        closeSync(fd);
      }
      const c = JSON.parse(text) as TranscriptCache;
      for (const r of Object.values(c.responses)) if (r[1] === day) out.push(r);
    } catch {
      // a cache being replaced, or not one: passed over
    }
  }
  return out;
}

/** The cost of responses, priced as `report usage` prices Claude Code requests; `unpriced` counts those without a price. */
export function costOf(responses: readonly Response[], prices: PriceTable): { picoDollars: bigint; unpriced: number } {
  let picoDollars = 0n;
  let unpriced = 0;
  for (const [model, , input, output, cacheRead, cacheWrite] of responses) {
    const price = model === '' ? undefined : prices.resolve(model);
    // Claude Code's input excludes the cache: the prompt is all three (usage.ts, billableTokensSql).
    const prompt = BigInt(input) + BigInt(cacheRead) + BigInt(cacheWrite);
    const band = price === undefined ? undefined : price.maxPromptTokens !== undefined && prompt > price.maxPromptTokens ? price.longContext : price.base;
    if (band === undefined) {
      unpriced++;
      continue;
    }
    picoDollars += costPicoDollars({ input: BigInt(input), cacheRead: BigInt(cacheRead), cacheWrite: BigInt(cacheWrite), output: BigInt(output), reasoning: 0n }, band);
  }
  return { picoDollars, unpriced };
}

export interface StatuslineConfig {
  readonly thresholdPct: number;
  readonly headroomTokens: bigint;
  readonly models: ModelTable;
  readonly prices: PriceTable;
  /** Where the transcript caches are kept. */
  readonly dir: string;
  /** Today (UTC, YYYY-MM-DD). */
  readonly today: string;
  /** Today's cost read through the running owner of the database (statusline/today.ts), when one answered. */
  readonly todayFromDatabase?: { readonly picoDollars: bigint; readonly unpriced: number } | undefined;
}

/** What the status line says, as `--format json` prints it. */
export interface Status {
  readonly session_id: string;
  readonly model: string;
  readonly model_id: string;
  /** Tokens in the context after the last response (SPEC §4: all input, cached or not, plus output); null before the first response. */
  readonly context_tokens: number | null;
  readonly context_window_tokens: number | null;
  /** usage_percentage (SPEC §5), a float; null without a window. */
  readonly context_pct: number | null;
  readonly threshold_pct: number;
  readonly headroom_tokens: number;
  /** The context at which the threshold is reached (the first that exceeds it); null without a window. */
  readonly threshold_tokens: number | null;
  /** exceeds_threshold_with_headroom (SPEC §5): `>=`, integers. */
  readonly above_threshold: boolean;
  readonly session_cost_usd: string;
  /** Responses of the session without a price (unknown model, or above the priced prompt size). */
  readonly session_unpriced: number;
  readonly today_cost_usd: string;
  readonly today_unpriced: number;
  /**
   * Where today's cost comes from: `database`, every observed request of the day in the database
   * a running watch or serve owns (as report usage --by day prices them); else
   * `statusline_sessions`, the sessions that showed this status line today.
   */
  readonly today_source: 'statusline_sessions' | 'database';
  /** Why the context is unknown, when it is. */
  readonly note?: string;
}

/** The smallest context that exceeds the threshold: ceil(saturating_sub(window*pct, headroom*100) / 100). */
function thresholdTokens(window: bigint, pct: number, headroom: bigint): bigint {
  const right = saturatingSub(saturatingMul(window, BigInt(pct)), saturatingMul(headroom, 100n));
  return (right + 99n) / 100n;
}

export function statusOf(input: StatuslineInput, config: StatuslineConfig): Status {
  const path = input.transcript_path ?? undefined;
  const reading = path ? readTranscript(path, config.dir) : undefined;
  const last = reading?.last;
  const modelId = last?.[0] ?? input.model?.id ?? '';
  const shown = input.model?.display_name ?? (modelId || 'unknown model');
  let contextTokens: bigint | null = null;
  if (last !== undefined) {
    contextTokens = normaliseContextTokens('claude_code', {
      inputTokens: BigInt(last[2]),
      outputTokens: BigInt(last[3]),
      cacheReadTokens: BigInt(last[4]),
      cacheWriteTokens: BigInt(last[5]),
      reasoningTokens: 0n,
    }).contextTokens;
  }
  const windowTokens = modelId === '' ? undefined : config.models.contextWindow(modelId);
  const window = windowTokens === undefined ? null : BigInt(windowTokens);
  const session = costOf(reading?.responses ?? [], config.prices);
  const today = config.todayFromDatabase ?? costOf(cachedResponsesOf(config.dir, config.today), config.prices);
  const note = path === undefined ? 'no transcript_path on stdin' : reading === undefined ? `no transcript yet at ${path}` : last === undefined ? 'no response in the transcript yet' : window === null ? `no context window known for ${modelId} (--models FILE)` : undefined;
  return {
    session_id: input.session_id,
    model: shown,
    model_id: modelId,
    context_tokens: contextTokens === null ? null : Number(contextTokens),
    context_window_tokens: window === null ? null : Number(window),
    context_pct: contextTokens === null || window === null ? null : usagePercentage(contextTokens, window),
    threshold_pct: config.thresholdPct,
    headroom_tokens: Number(config.headroomTokens),
    threshold_tokens: window === null ? null : Number(thresholdTokens(window, config.thresholdPct, config.headroomTokens)),
    above_threshold: contextTokens !== null && window !== null && exceedsThresholdWithHeadroom(contextTokens, window, config.thresholdPct, config.headroomTokens),
    session_cost_usd: formatUsd(session.picoDollars),
    session_unpriced: session.unpriced,
    today_cost_usd: formatUsd(today.picoDollars),
    today_unpriced: today.unpriced,
    today_source: config.todayFromDatabase === undefined ? 'statusline_sessions' : 'database',
    ...(note === undefined ? {} : { note }),
  };
}

/** Tokens as a status line shows them: exact below 10 000, else thousands cut (never rounded up) to one decimal. */
function tokens(n: number): string {
  if (n < 10_000) return String(n);
  if (n < 1_000_000) return `${Math.floor(n / 100) / 10}k`;
  return `${Math.floor(n / 100_000) / 10}M`;
}

/** Dollars to the cent, cut (the exact figure is in --format json). */
function dollars(usd: string, unpriced: number): string {
  const [whole, frac = ''] = usd.split('.');
  return `$${whole}.${frac.slice(0, 2).padEnd(2, '0')}${unpriced > 0 ? '+?' : ''}`;
}

/** The one line: model · context used of the window (share; threshold) · session cost · today's cost. */
export function renderStatus(s: Status): string {
  let context: string;
  if (s.context_tokens === null) context = `ctx – (${s.note ?? 'unknown'})`;
  else if (s.context_window_tokens === null || s.context_pct === null) context = `ctx ${tokens(s.context_tokens)} (window unknown)`;
  else {
    // The share is cut in integers, not rounded (84.9 for 849/1000, where the float gives 84.8999…): a figure under the threshold never shows it reached.
    const tenths = BigInt(s.context_tokens) * 1000n / BigInt(s.context_window_tokens);
    const capped = tenths > 1000n ? 1000n : tenths;
    const pct = `${capped / 10n}.${capped % 10n}`;
    const mark = s.above_threshold ? `≥ ${s.threshold_pct}% threshold` : `threshold ${s.threshold_pct}% at ${tokens(s.threshold_tokens ?? 0)}`;
    context = `ctx ${tokens(s.context_tokens)}/${tokens(s.context_window_tokens)} ${pct}% · ${mark}`;
  }
  return `${s.model} · ${context} · session ${dollars(s.session_cost_usd, s.session_unpriced)} · today ${dollars(s.today_cost_usd, s.today_unpriced)}`;
}
