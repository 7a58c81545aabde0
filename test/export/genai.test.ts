// The GenAI mapping alone: the pinned names are the conventions' own (as generated into
// @opentelemetry/semantic-conventions from v1.41.0), usage is normalised the way the conventions
// say (input includes cache, output includes reasoning), and ids are deterministic.
import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { GENAI, SEMCONV_VERSION, providerOf, spanIdOf, traceIdOf, usageSpan, type UsageRecord } from '../../src/export/genai.ts';

const CONSTANT_OF: Record<keyof typeof GENAI, string> = {
  operationName: 'ATTR_GEN_AI_OPERATION_NAME',
  providerName: 'ATTR_GEN_AI_PROVIDER_NAME',
  conversationId: 'ATTR_GEN_AI_CONVERSATION_ID',
  agentName: 'ATTR_GEN_AI_AGENT_NAME',
  agentId: 'ATTR_GEN_AI_AGENT_ID',
  requestModel: 'ATTR_GEN_AI_REQUEST_MODEL',
  responseId: 'ATTR_GEN_AI_RESPONSE_ID',
  toolName: 'ATTR_GEN_AI_TOOL_NAME',
  toolCallId: 'ATTR_GEN_AI_TOOL_CALL_ID',
  toolType: 'ATTR_GEN_AI_TOOL_TYPE',
  toolCallArguments: 'ATTR_GEN_AI_TOOL_CALL_ARGUMENTS',
  inputTokens: 'ATTR_GEN_AI_USAGE_INPUT_TOKENS',
  outputTokens: 'ATTR_GEN_AI_USAGE_OUTPUT_TOKENS',
  cacheReadInputTokens: 'ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS',
  cacheCreationInputTokens: 'ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS',
  reasoningOutputTokens: 'ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS',
  errorType: 'ATTR_ERROR_TYPE',
};

const usage = (over: Partial<UsageRecord>): UsageRecord => ({
  event_id: 'e1', ts_ms: '1765000000000', harness: 'claude_code', session_id: 's1', agent_id: '', turn_id: 't', model: 'claude-opus-4-5', request_id: 'req_1',
  input_tokens: '10', output_tokens: '20', cache_read_tokens: '300', cache_write_tokens: '4000', reasoning_tokens: null, context_tokens: '4330', origin: 'x', ...over,
});

describe('GenAI conventions v1.41.0', () => {
  it('every attribute name is the one @opentelemetry/semantic-conventions generates from v1.41.0', () => {
    const lib = incubating as unknown as Record<string, string>;
    for (const [k, name] of Object.entries(GENAI)) expect(lib[CONSTANT_OF[k as keyof typeof GENAI]], k).toBe(name);
    const pkg = createRequire(import.meta.url).resolve('@opentelemetry/semantic-conventions/incubating');
    expect(readFileSync(pkg.replace(/index-incubating\.\w+$/, 'experimental_attributes.mjs'), 'utf8')).toContain(`semantic-conventions/blob/v${SEMCONV_VERSION}/`);
    expect(lib['GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC']).toBe(providerOf('claude_code', ''));
    expect(lib['GEN_AI_PROVIDER_NAME_VALUE_X_AI']).toBe(providerOf('grok_build', ''));
    expect(providerOf('opencode', 'openai/gpt-5')).toBe('openai');
    expect(providerOf('opencode', 'some-local-model')).toBeUndefined();
  });

  it('Claude Code input_tokens exclude cache: the span adds cache read and write (stored figure kept apart)', () => {
    const a = usageSpan(usage({})).attributes;
    expect(a[GENAI.inputTokens]).toBe(4310);
    expect(a['toolcanon.usage.input_tokens']).toBe(10);
    expect(a[GENAI.cacheReadInputTokens]).toBe(300);
    expect(a[GENAI.cacheCreationInputTokens]).toBe(4000);
    expect(a[GENAI.outputTokens]).toBe(20);
    expect(a[GENAI.reasoningOutputTokens]).toBeUndefined();
  });

  it('opencode reports reasoning apart: output adds it; Codex input already includes cache', () => {
    const o = usageSpan(usage({ harness: 'opencode', model: 'openai/gpt-5', input_tokens: '5', cache_read_tokens: '1', cache_write_tokens: '0', reasoning_tokens: '7' })).attributes;
    expect(o[GENAI.outputTokens]).toBe(27);
    expect(o[GENAI.inputTokens]).toBe(6);
    const c = usageSpan(usage({ harness: 'codex', model: 'gpt-5-codex', input_tokens: '500', cache_read_tokens: '400', cache_write_tokens: null })).attributes;
    expect(c[GENAI.inputTokens]).toBe(500);
  });

  it('a count beyond 2^53 stays exact (as decimal text)', () => {
    const a = usageSpan(usage({ harness: 'codex', input_tokens: '18446744073709551615' })).attributes;
    expect(a[GENAI.inputTokens]).toBe('18446744073709551615');
  });

  it('ids are deterministic, of OTLP length, and differ between kinds', () => {
    expect(traceIdOf('s1')).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOf('s1')).toBe(traceIdOf('s1'));
    expect(spanIdOf('tool_call', 'e1')).toMatch(/^[0-9a-f]{16}$/);
    expect(spanIdOf('tool_call', 'e1')).not.toBe(spanIdOf('usage', 'e1'));
    expect(spanIdOf('session', 's1')).not.toBe(traceIdOf('s1').slice(0, 16));
  });
});
