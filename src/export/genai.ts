// Stored rows as OpenTelemetry spans following the GenAI semantic conventions, pinned to one
// version. Pure conversion (no SDK import here beyond types), so the mapping is testable alone.
//
// Pinned: OpenTelemetry semantic conventions v1.41.0 (the GenAI conventions are "Development"
// status; @opentelemetry/semantic-conventions 1.45.0, whose incubating entry is generated from
// v1.41.0, carries the same names: test/export/genai.test.ts checks every name below against it).
//   - one `execute_tool {gen_ai.tool.name}` span (INTERNAL) per tool call;
//   - one `chat {gen_ai.request.model}` span (CLIENT) per observed usage record: v1.41.0 defines
//     the five gen_ai.usage.* attributes on inference spans, while its metric
//     gen_ai.client.token.usage only tells input from output (gen_ai.token.type), so cache reads,
//     cache writes and reasoning would be lost as metrics; a replay of history also has no
//     aggregation interval to give a metric, where a span keeps its own time;
//   - one `invoke_agent {harness}` span per session, the parent of the others: a session is one
//     trace (gen_ai.conversation.id = session id).
import { sha256Hex } from '../util/hash.ts';
import { SpanKind, SpanStatusCode, type Attributes, type AttributeValue, type HrTime } from '@opentelemetry/api';
import type { Harness } from '../canonical/meta.ts';
import { USAGE_CONVENTIONS } from '../accounting/conventions.ts';

export const SEMCONV_VERSION = '1.41.0';
export const SEMCONV_SCHEMA_URL = `https://opentelemetry.io/schemas/${SEMCONV_VERSION}`;

/** The GenAI attribute names of semantic conventions v1.41.0 that the export writes. */
export const GENAI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  conversationId: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  requestModel: 'gen_ai.request.model',
  responseId: 'gen_ai.response.id',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  reasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  errorType: 'error.type',
} as const;

/** gen_ai.provider.name (v1.41.0 well-known values) of the models each harness runs. */
const PROVIDER_BY_HARNESS: Readonly<Record<Harness, string | undefined>> = {
  claude_code: 'anthropic',
  codex: 'openai',
  grok_build: 'x_ai',
  grok_build_concise: 'x_ai',
  grok_build_hashline: 'x_ai',
  memory: 'x_ai',
  lsp: 'x_ai',
  skills: 'x_ai',
  gemini_cli: 'gcp.gemini',
  // Qwen Code runs any OpenAI-compatible provider (DashScope by default, which has no
  // well-known value) and Copilot CLI routes Anthropic, OpenAI and Google models through
  // GitHub's own API: neither names one provider.
  qwen_code: undefined,
  copilot_cli: undefined,
  // pi runs any provider (Anthropic, OpenAI, Google, Bedrock, Mistral, OpenAI-compatible ones).
  pi_agent: undefined,
  // OpenClaw runs any provider too (the sessions log openai-codex, ollama, anthropic, …).
  openclaw: undefined,
  // Cline, Roo Code and Kilo Code run any of dozens of providers (Anthropic, OpenRouter, Bedrock, OpenAI-compatible ones).
  cline: undefined,
  roo_code: undefined,
  kilo_code: undefined,
  // Kimi CLI and Kimi Code run Moonshot's models by default, and others through their providers.
  kimi: undefined,
  // Amp routes each thread to Anthropic or OpenAI models (the usage names the model).
  amp: undefined,
  // Droid runs Anthropic, OpenAI and other models (its settings name the model).
  droid: undefined,
  // Goose runs any provider (Anthropic, OpenAI, Ollama, …; the ledger names the model).
  goose: undefined,
  // Hermes runs any OpenAI-compatible provider (OpenRouter, Nous Portal, OpenAI, Anthropic).
  hermes_agent: undefined,
  // Aider runs any litellm provider (the model names it: gemini/…, openai/…).
  aider: undefined,
  // Codebuff routes agents to Anthropic, OpenAI, Google and OpenRouter models.
  codebuff: undefined,
  // opencode runs any provider: its model ids say which ("openai/gpt-5", "anthropic/…").
  opencode: undefined,
  // MCP tool calls carry no model provider of their own.
  mcp: undefined,
};
const OPENCODE_PROVIDERS: Readonly<Record<string, string>> = { openai: 'openai', anthropic: 'anthropic', google: 'gcp.gemini', xai: 'x_ai', 'x-ai': 'x_ai', mistral: 'mistral_ai', deepseek: 'deepseek', groq: 'groq' };

export function providerOf(harness: string, model: string): string | undefined {
  if (harness === 'opencode') return OPENCODE_PROVIDERS[model.split('/')[0] ?? ''];
  return PROVIDER_BY_HARNESS[harness as Harness];
}

/** 16 bytes (hex) from the session id: a re-export gives the same trace id. */
export function traceIdOf(sessionId: string): string {
  return nonZero(sha256Hex(`toolcanon/trace\0${sessionId}`, 32));
}
/** 8 bytes (hex) from what a span stands for (`tool_call`/`usage` + event id, `session` + id). */
export function spanIdOf(kind: 'tool_call' | 'usage' | 'session', id: string): string {
  return nonZero(sha256Hex(`toolcanon/${kind}\0${id}`, 16));
}
// An all-zero id is invalid in OTLP; a hash gives one with probability 2^-64, but never emit it.
function nonZero(hex: string): string {
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

export function hrTimeOfMs(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, (ms - seconds * 1000) * 1_000_000];
}

/** An integer attribute: a number while exact, its decimal text beyond 2^53 (UInt64 columns). */
function intAttr(v: string | number | null | undefined): AttributeValue | undefined {
  if (v === null || v === undefined || v === '') return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : String(v);
}

function put(attrs: Attributes, key: string, value: AttributeValue | undefined | null): void {
  if (value === undefined || value === null || value === '') return;
  attrs[key] = value;
}

/** What the export needs of one span, before the SDK's ReadableSpan wraps it. */
export interface SpanData {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: SpanKind;
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: Attributes;
  readonly status: { code: SpanStatusCode; message?: string };
  /** service.name of the resource: the harness that ran the session. */
  readonly harness: string;
}

/** A tool_calls row as the export reads it. */
export interface ToolCallRecord {
  event_id: string;
  ts_ms: string | number;
  harness: string;
  namespace: string;
  session_id: string;
  agent_id: string;
  turn_id: string;
  call_id: string;
  model: string;
  tool_name: string;
  kind: string;
  label: string;
  read_only: boolean | number;
  meta_version: number | string;
  path: string | null;
  offset: string | number | null;
  limit: string | number | null;
  command: string | null;
  description: string | null;
  cwd: string | null;
  directory: string | null;
  pattern: string | null;
  raw_input: string;
  status: string;
  error: string;
  duration_ms: string | number | null;
  images: number | string;
  via: string;
  mcp_server: string;
  mcp_tool: string;
  flags: string[];
  input_bytes: string | number;
  output_bytes: string | number;
  source: string;
}

/** An observed token_usage row as the export reads it. */
export interface UsageRecord {
  event_id: string;
  ts_ms: string | number;
  harness: string;
  session_id: string;
  agent_id: string;
  turn_id: string;
  model: string;
  request_id: string;
  input_tokens: string | number | null;
  output_tokens: string | number | null;
  cache_read_tokens: string | number | null;
  cache_write_tokens: string | number | null;
  reasoning_tokens: string | number | null;
  context_tokens: string | number;
  origin: string;
}

export interface SessionRecord {
  session_id: string;
  harness: string;
  start_ms: string | number;
  end_ms: string | number;
  agents: string[];
}

/** An error message on a span status: the first 1 KiB (the stored error can be a whole log). */
const STATUS_MESSAGE_CHARS = 1024;

export function toolCallSpan(r: ToolCallRecord, includeRawInput: boolean): SpanData {
  const startMs = Number(r.ts_ms);
  const durationMs = r.duration_ms === null ? 0 : Number(r.duration_ms);
  const a: Attributes = {};
  put(a, GENAI.operationName, 'execute_tool');
  put(a, GENAI.toolName, r.tool_name);
  put(a, GENAI.toolCallId, r.call_id);
  // v1.41.0: "function" runs on the client (the agent's own tools), "extension" calls out to an
  // external service for the agent (an MCP server's tools).
  put(a, GENAI.toolType, r.namespace === 'mcp' ? 'extension' : 'function');
  put(a, GENAI.providerName, providerOf(r.harness, r.model));
  put(a, GENAI.conversationId, r.session_id);
  put(a, GENAI.agentId, r.agent_id);
  if (r.status === 'error') put(a, GENAI.errorType, 'tool_error');
  if (includeRawInput) put(a, GENAI.toolCallArguments, r.raw_input);
  put(a, 'toolcanon.event_id', r.event_id);
  put(a, 'toolcanon.harness', r.harness);
  put(a, 'toolcanon.namespace', r.namespace);
  put(a, 'toolcanon.turn_id', r.turn_id);
  put(a, 'toolcanon.model', r.model);
  put(a, 'toolcanon.kind', r.kind);
  put(a, 'toolcanon.label', r.label);
  a['toolcanon.read_only'] = r.read_only === true || r.read_only === 1;
  put(a, 'toolcanon.meta_version', intAttr(r.meta_version));
  put(a, 'toolcanon.status', r.status);
  // The eight canonical fields, where the projection set them.
  put(a, 'toolcanon.path', r.path);
  put(a, 'toolcanon.offset', intAttr(r.offset));
  put(a, 'toolcanon.limit', intAttr(r.limit));
  put(a, 'toolcanon.command', r.command);
  put(a, 'toolcanon.description', r.description);
  put(a, 'toolcanon.cwd', r.cwd);
  put(a, 'toolcanon.directory', r.directory);
  put(a, 'toolcanon.pattern', r.pattern);
  put(a, 'toolcanon.duration_ms', intAttr(r.duration_ms));
  put(a, 'toolcanon.via', r.via);
  put(a, 'toolcanon.mcp_server', r.mcp_server);
  put(a, 'toolcanon.mcp_tool', r.mcp_tool);
  if (r.flags.length) a['toolcanon.flags'] = [...r.flags];
  put(a, 'toolcanon.input_bytes', intAttr(r.input_bytes));
  put(a, 'toolcanon.output_bytes', intAttr(r.output_bytes));
  if (Number(r.images) > 0) put(a, 'toolcanon.images', intAttr(r.images));
  put(a, 'toolcanon.source', r.source);
  return {
    traceId: traceIdOf(r.session_id),
    spanId: spanIdOf('tool_call', r.event_id),
    parentSpanId: spanIdOf('session', r.session_id),
    name: `execute_tool ${r.tool_name}`,
    kind: SpanKind.INTERNAL,
    startMs,
    endMs: startMs + durationMs,
    attributes: a,
    status: r.status === 'error' ? { code: SpanStatusCode.ERROR, message: (r.error || 'tool_error').slice(0, STATUS_MESSAGE_CHARS) } : { code: SpanStatusCode.UNSET },
    harness: r.harness,
  };
}

const big = (v: string | number | null): bigint | undefined => (v === null || v === '' ? undefined : BigInt(v));
const bigAttr = (v: bigint | undefined): AttributeValue | undefined => (v === undefined ? undefined : intAttr(v.toString()));

export function usageSpan(r: UsageRecord): SpanData {
  const ts = Number(r.ts_ms);
  const input = big(r.input_tokens);
  const output = big(r.output_tokens);
  const cacheRead = big(r.cache_read_tokens);
  const cacheWrite = big(r.cache_write_tokens);
  const reasoning = big(r.reasoning_tokens);
  // v1.41.0: input_tokens SHOULD include cached tokens (read and written), output_tokens includes
  // reasoning. Harnesses that report them apart (USAGE_CONVENTIONS) get the sums; the figures as
  // stored stay beside them as toolcanon.usage.*.
  const c = USAGE_CONVENTIONS[r.harness as Harness] ?? { inputIncludesCache: true, outputIncludesReasoning: true };
  const inputTotal = input === undefined ? undefined : c.inputIncludesCache ? input : input + (cacheRead ?? 0n) + (cacheWrite ?? 0n);
  const outputTotal = output === undefined ? undefined : c.outputIncludesReasoning ? output : output + (reasoning ?? 0n);
  const a: Attributes = {};
  put(a, GENAI.operationName, 'chat');
  put(a, GENAI.providerName, providerOf(r.harness, r.model));
  put(a, GENAI.requestModel, r.model);
  put(a, GENAI.responseId, r.request_id);
  put(a, GENAI.conversationId, r.session_id);
  put(a, GENAI.agentId, r.agent_id);
  put(a, GENAI.inputTokens, bigAttr(inputTotal));
  put(a, GENAI.outputTokens, bigAttr(outputTotal));
  put(a, GENAI.cacheReadInputTokens, bigAttr(cacheRead));
  put(a, GENAI.cacheCreationInputTokens, bigAttr(cacheWrite));
  put(a, GENAI.reasoningOutputTokens, bigAttr(reasoning));
  put(a, 'toolcanon.event_id', r.event_id);
  put(a, 'toolcanon.harness', r.harness);
  put(a, 'toolcanon.turn_id', r.turn_id);
  put(a, 'toolcanon.usage.input_tokens', bigAttr(input));
  put(a, 'toolcanon.usage.output_tokens', bigAttr(output));
  put(a, 'toolcanon.context_tokens', intAttr(r.context_tokens));
  put(a, 'toolcanon.source', r.origin);
  return {
    traceId: traceIdOf(r.session_id),
    spanId: spanIdOf('usage', r.event_id),
    parentSpanId: spanIdOf('session', r.session_id),
    name: r.model === '' ? 'chat' : `chat ${r.model}`,
    kind: SpanKind.CLIENT,
    // The logs give when a response was recorded, not how long it took: a zero-length span.
    startMs: ts,
    endMs: ts,
    attributes: a,
    status: { code: SpanStatusCode.UNSET },
    harness: r.harness,
  };
}

export function sessionSpan(r: SessionRecord): SpanData {
  const a: Attributes = {};
  put(a, GENAI.operationName, 'invoke_agent');
  put(a, GENAI.agentName, r.harness);
  put(a, GENAI.providerName, providerOf(r.harness, ''));
  put(a, GENAI.conversationId, r.session_id);
  put(a, 'toolcanon.harness', r.harness);
  const agents = r.agents.filter((x) => x !== '');
  if (agents.length) a['toolcanon.agent_ids'] = agents;
  return {
    traceId: traceIdOf(r.session_id),
    spanId: spanIdOf('session', r.session_id),
    name: `invoke_agent ${r.harness}`,
    kind: SpanKind.INTERNAL,
    startMs: Number(r.start_ms),
    endMs: Number(r.end_ms),
    attributes: a,
    status: { code: SpanStatusCode.UNSET },
    harness: r.harness,
  };
}
