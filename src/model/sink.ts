// What the drive layer (src/pipeline/batch-writer.ts, the importers, the worker) needs of a store: the
// ports, typed by the row contracts of model/ only. src/sink/clickhouse.ts implements them for
// the embedded engine and a server; the accounting rebuilds its contexts through SessionStore
// (src/accounting/restore.ts) without knowing which store answers.
import type { DeadLetterRow, ToolCallRow } from './records.ts';
import type { DiscoveryEventRow, McpEventRow, McpServerStateRow, McpToolRegistrationRow } from './mcp.ts';
import type { BreachRow, TokenUsageRow } from './usage.ts';

/** A session context: a session's main agent (agent '') or one of its subagents. */
export interface ContextRef {
  readonly sessionId: string;
  readonly agentId: string;
}

/** One server's lifecycle: the events of a server in a session (and agent). */
export interface ServerToDerive extends ContextRef {
  readonly server: string;
}

/** What an importer has read of one file on one machine. */
export interface ImportFileState {
  readonly sizeBytes: number;
  readonly mtimeMs: number;
  /** Bytes up to the end of the last complete line read. */
  readonly completeBytes: number;
}

/** Where a database keeps what importers have read (import_files), per machine. */
export interface ImportStates {
  loadImportState(importer: string, deviceId?: string): Promise<Map<string, ImportFileState>>;
  writeImportState(importer: string, files: ReadonlyMap<string, ImportFileState>, importedAt: string, deviceId?: string): Promise<void>;
}

/** One tool of a session context and the event time a read starts at. */
export interface ToolSince extends ContextRef {
  readonly tool: string;
  readonly since: string;
}

/** One server and the event time (ClickHouse text) a read starts at, or, with `before`, ends before. */
export interface ServerFrom extends ServerToDerive {
  /** Events or windows at or after this time; absent: from the server's first. */
  readonly since?: string | undefined;
}

/** The columns of a context's latest token_usage row that its accounting state is rebuilt from. */
export type StoredContext = Pick<
  TokenUsageRow,
  | 'session_id' | 'agent_id' | 'context_tokens' | 'context_source' | 'model' | 'context_window_tokens' | 'above_threshold'
  | 'last_observed_context' | 'estimated_since_observed' | 'classes_since_observed' | 'session_seq'
>;

/** An event a context already applied: its id, and the figures of an observed usage ('' for an estimate). */
export interface AppliedEvent {
  readonly session_id: string;
  readonly agent_id: string;
  readonly event_id: string;
  readonly figures: string;
}

/** Where the accounting's state is kept between batches and processes: the token_usage rows. */
export interface SessionStore {
  /**
   * The latest applied row of each context that has one (the highest sequence number, of the
   * latest ingested copy of each row); contexts without a row are absent.
   */
  latestUsage(contexts: readonly ContextRef[]): Promise<StoredContext[]>;
  /** Which of these events their context already applied (stored token_usage rows carry them). */
  appliedEvents(events: readonly (ContextRef & { readonly eventId: string })[]): Promise<AppliedEvent[]>;
}

/** The wire type a Native column is sent in (src/sink/native.ts encodes it). */
export type NativeWire = 'String' | 'Bool' | 'UInt8' | 'UInt32' | 'UInt64' | 'Int64' | 'Float64' | 'Array(String)';

/** A column of a Native block: its name and the type it is sent in. */
export interface NativeColumn {
  readonly name: string;
  readonly wire: NativeWire;
  readonly nullable: boolean;
}

/** Rows encoded as one Native block elsewhere (the decode thread): its bytes in parts, and its row count. */
export interface EncodedBlock {
  readonly parts: readonly Uint8Array[];
  readonly rows: number;
}

/**
 * Tool-call rows encoded for one insert as they arrive (the store's own encoding: a batch costs
 * one copy of its bytes). Made by Sink.toolCallBatch, written by Sink.writeToolCalls.
 */
export interface ToolCallBatch {
  add(row: ToolCallRow): void;
  /**
   * Rows encoded elsewhere (the decode thread, src/thread/decode.ts) in the columns
   * Sink.toolCallBlockColumns gives: written with the batch, after the rows added before it.
   * Only a store that gives those columns takes blocks. `calls`: the session and event id of each
   * row of the block (the store looks up what it already holds of those sessions, and collapses
   * copies of one event within the batch).
   */
  addBlock?(block: EncodedBlock, calls: Iterable<{ readonly session_id: string; readonly event_id: string }>): void;
  /** Rows added so far. */
  readonly rows: number;
  /** Bytes encoded so far. */
  readonly bytes: number;
}

/** What a batch writes and what it reads back to derive the MCP and discovery tables. */
export interface Sink extends SessionStore {
  /** Where it writes, for messages (a data directory or a server, never credentials). */
  readonly description: string;
  /** An empty tool-call batch; `sizeHint` bytes are reserved up front. */
  toolCallBatch(sizeHint: number): ToolCallBatch;
  /** The columns a tool-call block for ToolCallBatch.addBlock is encoded in; absent: the store takes rows only. */
  toolCallBlockColumns?(): readonly NativeColumn[];
  writeToolCalls(batch: ToolCallBatch): Promise<void>;
  writeDeadLetters(rows: readonly DeadLetterRow[]): Promise<void>;
  writeTokenUsage(rows: readonly TokenUsageRow[]): Promise<void>;
  writeBreaches(rows: readonly BreachRow[]): Promise<void>;
  /** Writes the events as given: the batch writer passes those mcpEventsNotStored gives. */
  writeMcpEvents(rows: readonly McpEventRow[]): Promise<void>;
  /** The events of `rows` the store does not hold (by server and event id; of one given twice, the last). */
  mcpEventsNotStored(rows: readonly McpEventRow[]): Promise<readonly McpEventRow[]>;
  /** Writes the rows as given: the derivation leaves out those stored as they are (src/derive/mcp-state.ts). */
  writeMcpServerStates(rows: readonly McpServerStateRow[]): Promise<void>;
  writeMcpToolRegistrations(rows: readonly McpToolRegistrationRow[]): Promise<void>;
  writeDiscoveryEvents(rows: readonly DiscoveryEventRow[]): Promise<void>;
  /** The stored lifecycle events of these servers from `since` on (one copy per event id), raw text left out. */
  loadMcpEvents(servers: readonly ServerFrom[]): Promise<McpEventRow[]>;
  /**
   * Of each server and event kind, the stored row of the last window before `since` (of every
   * window when absent), as FINAL reads it: what a derivation of the server continues from.
   */
  loadMcpStateHeads(servers: readonly ServerFrom[]): Promise<McpServerStateRow[]>;
  /** The stored state rows of these servers from `since` on (every window when absent), as FINAL reads them. */
  loadMcpStates(servers: readonly ServerFrom[]): Promise<McpServerStateRow[]>;
  /** The stored discovery rows of these contexts (the latest computed copy of each event). */
  loadDiscoveryObservations(contexts: readonly ContextRef[]): Promise<DiscoveryEventRow[]>;
  /** The stored discovery rows of these events and of every event of these turns (the latest computed copy of each). */
  loadDiscoveryRows(events: readonly (ContextRef & { readonly eventId: string })[], turns: readonly (ContextRef & { readonly turnId: string })[]): Promise<DiscoveryEventRow[]>;
  /** The stored discovery rows of calls of these tools from `since` on (the latest computed copy of each). */
  loadDiscoveryCalls(tools: readonly ToolSince[]): Promise<DiscoveryEventRow[]>;
  /** A derivation's stored state of each of these keys (the latest written), by key; a key without one is absent. */
  loadDerivationState(derivation: string, keys: readonly string[]): Promise<Map<string, string>>;
  writeDerivationState(derivation: string, states: ReadonlyMap<string, string>, computedAt: string): Promise<void>;
  /**
   * Every stored copy of these tool calls with the rank tool_calls gives it (row_version), so
   * discovery keeps the copy tool_calls keeps; absent: copies are ranked by status and ingestion.
   */
  loadToolCallVersions?(events: readonly ToolCallRef[]): Promise<ToolCallCopyVersion[]>;
}

/** One tool call by its sorting key in tool_calls. */
export interface ToolCallRef {
  readonly harness: string;
  readonly sessionId: string;
  readonly eventId: string;
}

/** One stored copy of a tool call and its rank there (row_version, decimal text: it exceeds 2^53). */
export interface ToolCallCopyVersion {
  readonly session_id: string;
  readonly event_id: string;
  readonly status: string;
  readonly source: string;
  readonly ingested_at: string;
  readonly row_version: string;
}
