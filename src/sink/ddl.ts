// The analytics schema, in one place, versioned. Applied idempotently at start: each migration
// runs once (recorded in schema_migrations) and every statement is itself idempotent.
//
// Deduplication: at-least-once sources and repeated replays write the same event again.
// tool_calls is a ReplacingMergeTree keyed by event_id inside a monthly partition of the
// event's own ts, so a late duplicate always lands in the partition of its twin; reports read
// with FINAL. dead_letters is keyed the same way by dead_letter_id (source + raw bytes).

export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly statements: readonly string[];
  /** Tables rebuilt with another sorting key after the statements ran (data copied over). */
  readonly rebuilds?: readonly TableRebuild[];
}

/**
 * A table whose sorting key changes: ClickHouse cannot alter a sorting key in place, so the table
 * is created again under a temporary name with the same columns, filled from the old one, and
 * swapped in. Skipped when the table already has the target key (idempotent, and a crash midway
 * is resumed: see ClickHouseSink.rebuild).
 */
export interface TableRebuild {
  readonly table: string;
  /** system.tables.sorting_key of the target, as ClickHouse prints it. */
  readonly sortingKey: string;
  /** Everything after the columns: `ENGINE = ... PARTITION BY ... ORDER BY ... [SETTINGS ...]`. */
  readonly engine: string;
}

const VERTICAL_MERGES = 'SETTINGS vertical_merge_algorithm_min_rows_to_activate = 1, vertical_merge_algorithm_min_columns_to_activate = 1, merge_max_block_size = 2048';

/**
 * Migration 11's copy of a registration stored with a tool's own name (see there): each column
 * and the expression it is copied with (`q` the qualified name, `valid` whether it has one
 * separator between a server and a tool, as parseMcpName says). The id is idOf(snapshot event
 * id, qualified name): the first 16 bytes of SHA-256 over both joined by NUL, as hex.
 */
const REQUALIFIED: readonly (readonly [string, string])[] = [
  ['registration_id', "lower(hex(substring(SHA256(concat(snapshot_event_id, '\\0', q)), 1, 16)))"],
  ...['snapshot_event_id', 'ts', 'harness', 'session_id', 'agent_id', 'host', 'device_id', 'server', 'client_id'].map((c) => [c, c] as const),
  ['qualified_name', 'q'],
  ['name_qualified', 'true'],
  ['mcp_server', "if(valid, substring(q, 1, p - 1), '')"],
  ['mcp_tool', "if(valid, substring(q, p + 2), '')"],
  ...['visibility', 'model_visible', 'disabled', 'ui_resource_uri', 'mcp_initialized'].map((c) => [c, c] as const),
  ['flags', "if(valid, arrayFilter(f -> f != 'bad_mcp_name', old_flags), old_flags)"],
  ...['source', 'ingested_at'].map((c) => [c, c] as const),
];

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'tool_calls and dead_letters',
    statements: [
      `CREATE TABLE IF NOT EXISTS tool_calls (
        event_id String,
        ts DateTime64(3, 'UTC'),
        harness LowCardinality(String),
        namespace LowCardinality(String),
        session_id String,
        turn_id String,
        call_id String,
        model LowCardinality(String),
        tool_name LowCardinality(String),
        kind LowCardinality(String),
        label LowCardinality(String),
        read_only Bool,
        meta_version UInt32,
        canonical_input String,
        path Nullable(String),
        \`offset\` Nullable(Int64),
        \`limit\` Nullable(Int64),
        command Nullable(String),
        description Nullable(String),
        cwd Nullable(String),
        directory Nullable(String),
        pattern Nullable(String),
        raw_input String,
        status LowCardinality(String),
        error String,
        duration_ms Nullable(UInt64),
        images UInt32,
        via LowCardinality(String),
        mcp_server LowCardinality(String),
        mcp_tool LowCardinality(String),
        flags Array(LowCardinality(String)),
        input_bytes UInt64,
        output_bytes UInt64,
        source String,
        ingested_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(ingested_at)
      PARTITION BY toYYYYMM(ts)
      ORDER BY (event_id)`,
      `CREATE TABLE IF NOT EXISTS dead_letters (
        dead_letter_id String,
        raw_base64 String EPHEMERAL,
        raw String DEFAULT base64Decode(raw_base64),
        raw_bytes UInt64,
        reason LowCardinality(String),
        detail String,
        source String,
        ingested_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(ingested_at)
      ORDER BY (dead_letter_id)`,
    ],
  },
  {
    version: 2,
    description: 'token_usage and threshold_breaches',
    statements: [
      // One row per observed request and per estimate, side by side; the context figures are
      // the session's state after the row (also what a restarted worker rebuilds state from).
      `CREATE TABLE IF NOT EXISTS token_usage (
        event_id String,
        ts DateTime64(3, 'UTC'),
        harness LowCardinality(String),
        session_id String,
        turn_id String,
        model LowCardinality(String),
        source LowCardinality(String),
        request_id String,
        input_tokens Nullable(UInt64),
        output_tokens Nullable(UInt64),
        cache_read_tokens Nullable(UInt64),
        cache_write_tokens Nullable(UInt64),
        reasoning_tokens Nullable(UInt64),
        estimated_tokens Nullable(UInt64),
        content_class LowCardinality(String),
        content_bytes UInt64,
        context_tokens UInt64,
        context_source LowCardinality(String),
        context_window_tokens Nullable(UInt64),
        usage_pct Float64,
        above_threshold Bool,
        threshold_pct UInt8,
        headroom_tokens UInt64,
        drift_estimated_tokens Nullable(UInt64),
        drift_observed_tokens Nullable(UInt64),
        drift_content_class LowCardinality(String),
        last_observed_context Nullable(UInt64),
        estimated_since_observed UInt64,
        classes_since_observed Array(LowCardinality(String)),
        session_seq UInt64,
        flags Array(LowCardinality(String)),
        origin String,
        ingested_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(ingested_at)
      PARTITION BY toYYYYMM(ts)
      ORDER BY (session_id, source, event_id)`,
      `CREATE TABLE IF NOT EXISTS threshold_breaches (
        breach_id String,
        session_id String,
        harness LowCardinality(String),
        ts DateTime64(3, 'UTC'),
        model LowCardinality(String),
        used_tokens UInt64,
        context_window_tokens UInt64,
        threshold_pct UInt8,
        headroom_tokens UInt64,
        usage_pct Float64,
        source LowCardinality(String),
        event_id String,
        event_kind LowCardinality(String),
        ingested_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(ingested_at)
      PARTITION BY toYYYYMM(ts)
      ORDER BY (session_id, breach_id)`,
    ],
  },
  {
    version: 3,
    description: 'import_files: what each importer has read of each file',
    statements: [
      `CREATE TABLE IF NOT EXISTS import_files (
        importer LowCardinality(String),
        path String,
        size_bytes UInt64,
        mtime_ms Float64,
        complete_bytes UInt64,
        imported_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(imported_at)
      ORDER BY (importer, path)`,
    ],
  },
  {
    version: 4,
    description: 'agent_id: subagents keep context windows of their own',
    statements: [
      `ALTER TABLE tool_calls ADD COLUMN IF NOT EXISTS agent_id String DEFAULT '' AFTER session_id`,
      `ALTER TABLE token_usage ADD COLUMN IF NOT EXISTS agent_id String DEFAULT '' AFTER session_id`,
      `ALTER TABLE threshold_breaches ADD COLUMN IF NOT EXISTS agent_id String DEFAULT '' AFTER session_id`,
    ],
  },
  {
    version: 5,
    description: 'column-at-a-time merges: bounded memory while a worker ingests',
    // A horizontal merge reads every column of every part at once (buffers per column per
    // part): on the wide tables that is ~150 MiB extra resident memory in an embedded worker.
    // Vertical merges take one column at a time, for every merge, in smaller blocks.
    statements: ['tool_calls', 'token_usage', 'dead_letters', 'threshold_breaches'].map(
      (table) =>
        `ALTER TABLE ${table} MODIFY SETTING vertical_merge_algorithm_min_rows_to_activate = 1, vertical_merge_algorithm_min_columns_to_activate = 1, merge_max_block_size = 2048`,
    ),
  },
  {
    version: 6,
    description: 'MCP lifecycle and tool discovery: mcp_events, mcp_server_state, mcp_tool_registrations, discovery_events',
    // Raw lifecycle events are all kept (deduplicated by id). The derived tables are recomputed
    // per server / per session and agent from everything stored, by event time, whenever new
    // events of theirs arrive: a row keeps its id and the latest computation wins (computed_at).
    statements: [
      `CREATE TABLE IF NOT EXISTS mcp_events (
        event_id String,
        ts DateTime64(3, 'UTC'),
        harness LowCardinality(String),
        session_id String,
        agent_id String,
        server String,
        client_id String,
        event_kind LowCardinality(String),
        transport LowCardinality(String),
        state LowCardinality(String),
        attempt Nullable(UInt32),
        backoff_ms Nullable(UInt64),
        error String,
        mcp_initialized Nullable(Bool),
        tool_count Nullable(UInt32),
        raw String,
        source String,
        ingested_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(ingested_at)
      PARTITION BY toYYYYMM(ts)
      ORDER BY (session_id, agent_id, server, event_id)
      SETTINGS vertical_merge_algorithm_min_rows_to_activate = 1, vertical_merge_algorithm_min_columns_to_activate = 1, merge_max_block_size = 2048`,
      `CREATE TABLE IF NOT EXISTS mcp_server_state (
        state_id String,
        harness LowCardinality(String),
        session_id String,
        agent_id String,
        server String,
        event_kind LowCardinality(String),
        window_start DateTime64(3, 'UTC'),
        ts DateTime64(3, 'UTC'),
        coalesced_events UInt32,
        last_event_id String,
        client_id String,
        transport LowCardinality(String),
        state LowCardinality(String),
        since DateTime64(3, 'UTC'),
        connected_ms UInt64,
        observed_ms UInt64,
        reconnects UInt32,
        stale_disconnects UInt32,
        restarts UInt32,
        restart_attempt UInt32,
        backoff_ms Nullable(UInt64),
        tools_changed_events UInt64,
        tool_count Nullable(UInt32),
        mcp_initialized Nullable(Bool),
        error String,
        flags Array(LowCardinality(String)),
        computed_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(computed_at)
      PARTITION BY toYYYYMM(window_start)
      ORDER BY (session_id, agent_id, server, event_kind, window_start)`,
      `CREATE TABLE IF NOT EXISTS mcp_tool_registrations (
        registration_id String,
        snapshot_event_id String,
        ts DateTime64(3, 'UTC'),
        harness LowCardinality(String),
        session_id String,
        agent_id String,
        server String,
        client_id String,
        qualified_name String,
        mcp_server String,
        mcp_tool String,
        visibility LowCardinality(String),
        model_visible Bool,
        disabled Bool,
        ui_resource_uri String,
        mcp_initialized Bool,
        flags Array(LowCardinality(String)),
        source String,
        ingested_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(ingested_at)
      PARTITION BY toYYYYMM(ts)
      ORDER BY (session_id, server, snapshot_event_id, qualified_name)`,
      `CREATE TABLE IF NOT EXISTS discovery_events (
        event_id String,
        ts DateTime64(3, 'UTC'),
        harness LowCardinality(String),
        session_id String,
        agent_id String,
        turn_id String,
        model LowCardinality(String),
        discovery_kind LowCardinality(String),
        tool_name String,
        status LowCardinality(String),
        query String,
        result_tools Array(String),
        reported_budget_exhausted Bool,
        refused_tool String,
        recovery_query String,
        called_tool String,
        turn_search_seq UInt32,
        budget_refusal Bool,
        recovery_searched Bool,
        recovered Bool,
        after_search Bool,
        flags Array(LowCardinality(String)),
        source String,
        ingested_at DateTime64(3, 'UTC'),
        computed_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(computed_at)
      PARTITION BY toYYYYMM(ts)
      ORDER BY (session_id, agent_id, event_id)`,
    ],
  },
  {
    version: 7,
    description: 'sort keys for the queries users run: harness, then session, then the id; the most complete copy of a tool call wins',
    // Reports group by harness and filter by it; users look up one session. ReplacingMergeTree
    // deduplicates on the whole sorting key, so every column of it is part of the event's
    // identity (harness and session are in every default event id). A day filter prunes the
    // monthly partitions. token_usage keeps (session_id, source, event_id): every batch restores
    // contexts and looks up applied events by session, and a harness-first key measured 0.61x
    // on a one-session lookup (bench/query-keys.ts). The version of a tool call ranks a finished
    // call above a pending copy of it, then the later ingestion.
    statements: [
      `ALTER TABLE tool_calls ADD COLUMN IF NOT EXISTS row_version UInt64 MATERIALIZED
        if(status = 'pending', 0, 1) * 100000000000000 + toUInt64(toUnixTimestamp64Milli(ingested_at))`,
    ],
    rebuilds: [
      {
        table: 'tool_calls',
        sortingKey: 'harness, session_id, event_id',
        engine: `ENGINE = ReplacingMergeTree(row_version) PARTITION BY toYYYYMM(ts) ORDER BY (harness, session_id, event_id) ${VERTICAL_MERGES}`,
      },
      {
        table: 'threshold_breaches',
        sortingKey: 'harness, session_id, breach_id',
        engine: `ENGINE = ReplacingMergeTree(ingested_at) PARTITION BY toYYYYMM(ts) ORDER BY (harness, session_id, breach_id) ${VERTICAL_MERGES}`,
      },
    ],
  },
  {
    version: 8,
    description: 'redactions: secrets replaced in a stored row (tool_calls also flag it redacted)',
    statements: [
      `ALTER TABLE tool_calls ADD COLUMN IF NOT EXISTS redactions UInt32 DEFAULT 0 AFTER flags`,
      `ALTER TABLE dead_letters ADD COLUMN IF NOT EXISTS redactions UInt32 DEFAULT 0`,
      `ALTER TABLE mcp_events ADD COLUMN IF NOT EXISTS redactions UInt32 DEFAULT 0 AFTER raw`,
    ],
  },
  {
    version: 9,
    description: 'host and device_id: one warehouse for many machines',
    // The machine an event was recorded on, on every analytics row ('' when unknown: rows
    // stored before, and events replayed or consumed that do not say). Not part of any sorting
    // key: ReplacingMergeTree deduplicates on the whole key, and the same event (same id) read
    // on two machines (synced or copied logs) must stay one row, not count twice; the copy
    // stored last says which machine. A session's rows come from one machine, so the sessions
    // of one host sit together in the key order already.
    //
    // import_files keeps what each machine has read (device_id in its key): two machines
    // importing into one server with the same paths must not take each other's offsets. Rows
    // of before (device_id '') stay the state of whichever machine imports next.
    statements: [
      ...['tool_calls', 'token_usage', 'threshold_breaches', 'mcp_events', 'mcp_server_state', 'mcp_tool_registrations', 'discovery_events'].map(
        (table) =>
          `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS host LowCardinality(String) DEFAULT '' AFTER agent_id, ADD COLUMN IF NOT EXISTS device_id LowCardinality(String) DEFAULT '' AFTER host`,
      ),
      `ALTER TABLE dead_letters ADD COLUMN IF NOT EXISTS host LowCardinality(String) DEFAULT '', ADD COLUMN IF NOT EXISTS device_id LowCardinality(String) DEFAULT ''`,
      `ALTER TABLE import_files ADD COLUMN IF NOT EXISTS device_id String DEFAULT '' AFTER importer`,
    ],
    rebuilds: [
      {
        table: 'import_files',
        sortingKey: 'importer, device_id, path',
        engine: 'ENGINE = ReplacingMergeTree(imported_at) ORDER BY (importer, device_id, path)',
      },
    ],
  },
  {
    version: 10,
    description: 'tool_calls: of two finished copies of a call, the one carrying more of its input and output wins',
    // One call can arrive from two sources with one event id (Claude Code's transcript and its
    // OpenTelemetry export: the transcript has the output and the whole input, the export only
    // sizes and, with tool details, a truncated input). A finished copy still outranks a pending
    // one; between finished copies the one with more bytes of input and output (capped at
    // 99,999: two larger copies tie) wins, then the later ingestion. Pending rows keep the
    // ingestion time alone, below every finished row of any version. Rows stored before keep
    // their version (a finished one: 10^14 + ms), which every finished row stored now outranks.
    statements: [
      `ALTER TABLE tool_calls MODIFY COLUMN row_version UInt64 MATERIALIZED
        if(status = 'pending', toUInt64(toUnixTimestamp64Milli(ingested_at)),
          1000000000000000000 + least(input_bytes + output_bytes, 99999) * 10000000000000 + toUInt64(toUnixTimestamp64Milli(ingested_at)))`,
    ],
  },
  {
    version: 11,
    description: 'mcp_tool_registrations: a tool listed by its own name (no separator) qualified with its snapshot\'s server; name_qualified says so',
    // An MCP client's tools/list returns the server's own names (`create_issue`); rows stored
    // before kept such a name as is, flagged bad_mcp_name with no mcp_server, so two servers'
    // `create_issue` were one tool. Those rows are stored again qualified, as a snapshot is
    // decoded now (registration id of the qualified name, bad_mcp_name dropped when the
    // qualified name is valid), and the old rows deleted. Idempotent: a rerun finds no old row.
    statements: [
      `ALTER TABLE mcp_tool_registrations ADD COLUMN IF NOT EXISTS name_qualified Bool DEFAULT false AFTER qualified_name`,
      `INSERT INTO mcp_tool_registrations (${REQUALIFIED.map(([c]) => c).join(', ')})
        SELECT ${REQUALIFIED.map(([c, e]) => `${e} AS ${c}`).join(', ')}
        FROM (SELECT *, flags AS old_flags, concat(server, '__', qualified_name) AS q, position(q, '__') AS p,
                p > 1 AND p + 2 <= length(q) AND position(q, '__', p + 1) = 0 AS valid
              FROM mcp_tool_registrations WHERE position(qualified_name, '__') = 0 AND NOT name_qualified)`,
      `ALTER TABLE mcp_tool_registrations DELETE WHERE position(qualified_name, '__') = 0 AND NOT name_qualified SETTINGS mutations_sync = 2`,
    ],
  },
  {
    version: 12,
    description: 'mcp_tool_registrations: the size of each tool\'s definition (bytes and estimated tokens) when the snapshot lists its description or input_schema',
    // What a tool costs in every request it is visible in (docs/mcp.md, "What tools cost before
    // they are called"). Rows stored before have no definition (NULL): snapshots could not carry one.
    statements: [
      `ALTER TABLE mcp_tool_registrations ADD COLUMN IF NOT EXISTS definition_bytes Nullable(UInt64) AFTER ui_resource_uri, ADD COLUMN IF NOT EXISTS definition_tokens Nullable(UInt64) AFTER definition_bytes`,
    ],
  },
  {
    version: 13,
    description: 'mcp_server_state: carry, the derivation\'s state after each row, so a batch continues from the last row instead of the server\'s history',
    // Issue 31 step 2. Rows stored before have none (''): the next batch of such a server derives
    // it once from the server's events, as every batch did before.
    statements: [`ALTER TABLE mcp_server_state ADD COLUMN IF NOT EXISTS carry String DEFAULT '' AFTER flags`],
  },
  {
    version: 14,
    description: 'derivation_state: the state a derivation continues from, per key (discovery: a session context\'s first listing of each tool); discovery_events: an index of turn_id',
    // Issue 31 step 2. discovery_events is sorted by event id, so a batch's turns were found by
    // reading the whole session; the bloom filter skips the granules without them. A context
    // with stored rows and no state is derived once from its rows, as every batch was before.
    statements: [
      `CREATE TABLE IF NOT EXISTS derivation_state (
        derivation LowCardinality(String),
        key String,
        state String,
        computed_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(computed_at)
      ORDER BY (derivation, key)`,
      `ALTER TABLE discovery_events ADD INDEX IF NOT EXISTS turn turn_id TYPE bloom_filter GRANULARITY 1`,
      `ALTER TABLE discovery_events MATERIALIZE INDEX turn SETTINGS mutations_sync = 2`,
    ],
  },
  {
    version: 15,
    description: 'token_usage: a projection of each accounting context\'s highest sequence and where its row is, so a context is restored by key, not by reading its rows',
    // Issue 31 step 2. token_usage is sorted by session, source and event: the highest sequence
    // of a context was found by reading all its rows (220-280 ms at 1 M). An aggregate projection
    // is written in each part with its rows (a process killed between the two leaves neither).
    // A ReplacingMergeTree takes a projection only when told what a merge does to it: 'ignore'
    // merges it as it is (rebuilding it in every merge made a replay 15-25 % slower), so it may
    // still name a copy a merge removed; ClickHouseSink.latestUsage checks the row it names.
    statements: [
      `ALTER TABLE token_usage MODIFY SETTING deduplicate_merge_projection_mode = 'ignore'`,
      `ALTER TABLE token_usage ADD PROJECTION IF NOT EXISTS heads (SELECT session_id, agent_id, max(session_seq), argMax(tuple(source, event_id), tuple(session_seq, ts, ingested_at)) GROUP BY session_id, agent_id)`,
      `ALTER TABLE token_usage MATERIALIZE PROJECTION heads SETTINGS mutations_sync = 2`,
    ],
  },
];

export const SCHEMA_MIGRATIONS_DDL = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version UInt32,
  description String,
  applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree ORDER BY version`;

export const LATEST_SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));
