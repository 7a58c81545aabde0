// The task files Cline and its forks (Roo Code, Kilo Code) write in `tasks/<task id>/`, narrowed
// from `unknown`: `ui_messages.json` (ClineMessage[], cline/cline apps/vscode/src/shared/
// ExtensionMessage.ts; RooCodeInc/Roo-Code packages/types/src/message.ts) and
// `api_conversation_history.json` (Anthropic MessageParam[] with `ts`, cline/cline
// apps/vscode/src/shared/messages/content.ts). Each reader returns the record or a sentence
// naming the field that kept it from being one.
import type { Harness } from '../../canonical/meta.ts';
import { describeValue } from '../lines.ts';
import { idMember, isObject, MAX_ID_CHARS, type JsonObject } from '../json.ts';

/** What differs between the harnesses that write this format. */
export interface ClineFamily {
  readonly harness: Harness;
  /**
   * How `tokensIn` relates to the cache figures. `exclusive`: tokensIn is the uncached input
   * (Cline: the context is tokensIn + tokensOut + cacheWrites + cacheReads). `judged`: builds
   * before Roo Code's 2025-10-31 change wrote the provider's own input (Anthropic: uncached;
   * OpenAI-compatible: cached inside), later builds the total input; a record with
   * `apiProtocol: "openai"`, or whose tokensIn is at least its cache figures, is read as total.
   */
  readonly tokensIn: 'exclusive' | 'judged';
  /** The tool names the harness's system prompt declares (XML tool use in assistant text). */
  readonly xmlTools: ReadonlySet<string>;
}

// ------------------------------------------------------------------------- ui_messages.json

/** `ts` of a message: milliseconds since the epoch, as the harness stamps it (Date.now()). */
export function msTime(v: unknown): string | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 && v < 253402300800000 ? new Date(v).toISOString() : undefined;
}

/** The usage a `say` message carries in its JSON `text` (ClineApiReqInfo / ClineSubagentUsageInfo). */
export interface ReqUsage {
  readonly tokensIn: number;
  readonly tokensOut: number;
  readonly cacheWrites: number;
  readonly cacheReads: number;
  /** `apiProtocol` (Roo Code, Kilo Code): which provider style wrote the figures. */
  readonly apiProtocol: string | undefined;
}

const USAGE_KEYS = ['tokensIn', 'tokensOut', 'cacheWrites', 'cacheReads'] as const;

/**
 * The figures of an `api_req_started` (or `deleted_api_reqs`, `subagent_usage`) message's text:
 * `'none'` when the text holds none of them (the placeholder written before the request, a
 * request cancelled before any usage), or a fault sentence.
 */
export function readReqUsage(text: unknown): ReqUsage | 'none' | { readonly fault: string } {
  if (typeof text !== 'string') return { fault: `\`text\` is ${describeValue(text)}, not the request's JSON text.` };
  let info: unknown;
  try {
    info = JSON.parse(text);
  } catch {
    return { fault: '`text` is not JSON: the request figures cannot be read.' };
  }
  if (!isObject(info)) return { fault: `\`text\` is JSON but ${describeValue(info)}, not an object.` };
  const got: Partial<Record<(typeof USAGE_KEYS)[number], number>> = {};
  for (const key of USAGE_KEYS) {
    const v = info[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return { fault: `\`text.${key}\` is ${describeValue(v)}, not a non-negative integer.` };
    got[key] = v;
  }
  if (Object.keys(got).length === 0) return 'none';
  const protocol = info['apiProtocol'];
  return {
    tokensIn: got.tokensIn ?? 0,
    tokensOut: got.tokensOut ?? 0,
    cacheWrites: got.cacheWrites ?? 0,
    cacheReads: got.cacheReads ?? 0,
    apiProtocol: typeof protocol === 'string' ? protocol : undefined,
  };
}

/** The uncached input of a record, by the family's reading of tokensIn (see ClineFamily). */
export function uncachedInput(u: ReqUsage, family: ClineFamily): { input: number; total: boolean } {
  const cache = u.cacheReads + u.cacheWrites;
  if (family.tokensIn === 'exclusive' || cache === 0) return { input: u.tokensIn, total: false };
  const total = u.apiProtocol === 'openai' || u.tokensIn >= cache;
  return total ? { input: Math.max(0, u.tokensIn - cache), total: true } : { input: u.tokensIn, total: false };
}

/** `modelInfo.modelId` of a message (Cline writes it on each message since 3.2x). */
export function modelOf(o: JsonObject): string | undefined {
  const info = o['modelInfo'];
  return isObject(info) ? idMember(info, 'modelId') : undefined;
}

// ------------------------------------------------------------------------- api_conversation_history.json

/** A tool use in an assistant message: a native `tool_use` block or an XML tag in its text. */
export interface ToolUse {
  readonly id: string;
  readonly name: string;
  /** The verbatim JSON text of the input (a native block's `input`), or the XML parameters as an object. */
  readonly input: { readonly json: string } | { readonly params: Readonly<Record<string, string>> };
  readonly native: boolean;
}

/** A result in a user message: a `tool_result` block, or the text blocks after an XML result marker. */
export interface ToolResult {
  readonly text: string | undefined;
  readonly isError: boolean;
  readonly images: number;
}

/** A tool result's content: a string, or blocks of text and images. */
export function resultContent(content: unknown): { text: string | undefined; images: number } {
  if (typeof content === 'string') return { text: content, images: 0 };
  if (!Array.isArray(content)) return { text: undefined, images: 0 };
  const texts: string[] = [];
  let images = 0;
  for (const b of content as readonly unknown[]) {
    if (!isObject(b)) continue;
    if (b['type'] === 'text' && typeof b['text'] === 'string') texts.push(b['text']);
    else if (b['type'] === 'image') images++;
  }
  return { text: texts.length ? texts.join('\n') : undefined, images };
}

/**
 * Whether a result's text says the call failed: the harnesses' formatResponse.toolError
 * ("The tool execution failed with the following error:"), toolDenied ("The user denied this
 * operation"), missing parameters, or an `<error>` block.
 */
export function failedText(text: string): string | undefined {
  const t = text.trimStart();
  if (t.startsWith('The user denied this operation')) return 'denied: The user denied this operation.';
  const m = /The tool execution failed with the following error:\s*<error>\s*([^\n]*)/.exec(t);
  if (m) return m[1]?.trim() || 'error';
  if (t.startsWith('<error>')) return t.slice('<error>'.length).trim().split('\n')[0]?.replace(/<\/error>$/, '').trim() || 'error';
  if (t.startsWith('Missing value for required parameter')) return t.split('\n')[0] ?? 'error';
  return undefined;
}

/** `[<tool> for '<what>'] Result:` (or `[<tool>] Result:`): where an XML call's result starts in the next user message. */
const RESULT_MARKER = /^\[([a-z_]+)(?: for [\s\S]*?)?\] Result:/;

export function resultMarker(text: string): string | undefined {
  return RESULT_MARKER.exec(text)?.[1];
}

/**
 * The XML tool uses in an assistant text (the format of the system prompt before native tool
 * calling: `<read_file>\n<path>src/a.ts</path>\n</read_file>`): each tag whose name is one of
 * the family's tools, its parameters the child tags, trimmed as the harness's parser trims them.
 */
export function xmlToolUses(text: string, tools: ReadonlySet<string>): { name: string; params: Record<string, string> }[] {
  const out: { name: string; params: Record<string, string> }[] = [];
  const open = /<([a-z_]+)>/g;
  let m: RegExpExecArray | null;
  while ((m = open.exec(text)) !== null) {
    const name = m[1] as string;
    if (!tools.has(name)) continue;
    const close = text.indexOf(`</${name}>`, open.lastIndex);
    // A tag never closed: the response was cut off, the harness ran nothing.
    if (close < 0) break;
    const body = text.slice(open.lastIndex, close);
    const params: Record<string, string> = {};
    const param = /<([a-z_]+)>([\s\S]*?)<\/\1>/g;
    let p: RegExpExecArray | null;
    while ((p = param.exec(body)) !== null) {
      const key = p[1] as string;
      if (!(key in params)) params[key] = (p[2] as string).trim();
    }
    out.push({ name, params });
    open.lastIndex = close + name.length + 3;
  }
  return out;
}

/**
 * An MCP call as `server__tool`: Cline's `use_mcp_tool {server_name, tool_name, arguments}`,
 * and Roo Code's / Kilo Code's native `mcp--<server>--<tool>` (or `mcp__…`, as models rewrite
 * the hyphens; RooCodeInc/Roo-Code src/utils/mcp-name.ts). Undefined for any other tool.
 */
export function mcpToolName(name: string, input: JsonObject | undefined): string | undefined {
  if (name === 'use_mcp_tool' && input) {
    const server = input['server_name'];
    const tool = input['tool_name'];
    if (typeof server === 'string' && server !== '' && typeof tool === 'string' && tool !== '') {
      const q = `${server}__${tool}`;
      return q.length <= MAX_ID_CHARS ? q : undefined;
    }
    return undefined;
  }
  const m = /^mcp(?:--|__)(.+?)(?:--|__)(.+)$/.exec(name);
  if (!m) return undefined;
  return `${m[1] as string}__${m[2] as string}`;
}
