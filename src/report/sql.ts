// Reports over the analytics tables. Each reads deduplicated data (FINAL), so a replayed input
// never doubles a figure.
import { DEFINITION_OVERHEAD_CTES, REQUESTS_PER_DIRECT_CALL } from './definitions.ts';

/** One row of a report or a query, as printed (see cli/format.ts). */
export type Row = Readonly<Record<string, unknown>>;

export const TOOL_REPORT_GROUPINGS = ['tool', 'namespace', 'kind', 'host'] as const;
export type ToolReportGrouping = (typeof TOOL_REPORT_GROUPINGS)[number];

/**
 * An MCP call, in every report (tools, mcp, discovery and the HTML page): a tool call of an MCP
 * server's tool, its server and tool known (namespace mcp; a search meta-tool filed under mcp, or
 * a name that did not parse, has no server), whatever came of it: ok, failed, pending, or
 * refused as not in active set. A condition on tool_calls rows.
 */
export const MCP_CALL = `namespace = 'mcp' AND mcp_server != '' AND mcp_tool != ''`;

/** The qualified name (`server__tool`) of an MCP call's tool: its tool_name in `report tools`. */
export const MCP_CALL_TOOL = `concat(mcp_server, '__', mcp_tool)`;

/** Calls per namespace / kind / tool, with errors, MCP and read-only shares. */
export function toolsReportSql(by: ToolReportGrouping): string {
  const keys = { tool: ['namespace', 'kind', 'tool_name'], namespace: ['namespace'], kind: ['kind'], host: ['host', 'device_id'] }[by];
  return `SELECT ${keys.join(', ')},
    count() AS calls,
    countIf(status = 'error') AS errors,
    round(errors / calls, 4) AS error_share,
    countIf(read_only) AS read_only_calls,
    round(read_only_calls / calls, 4) AS read_only_share,
    countIf(via = 'use_tool') AS via_use_tool,
    countIf(${MCP_CALL}) AS mcp_calls,
    countIf(length(flags) > 0) AS flagged,
    countIf(redactions > 0) AS redacted,
    sum(redactions) AS secrets_redacted,
    sum(input_bytes) AS input_bytes,
    sum(output_bytes) AS output_bytes
  FROM tool_calls FINAL
  GROUP BY ${keys.join(', ')}
  ORDER BY calls DESC, ${keys.join(', ')}`;
}

export const DEAD_LETTERS_REPORT_SQL = `SELECT reason, count() AS dead_letters, sum(raw_bytes) AS raw_bytes, sum(redactions) AS secrets_redacted, any(source) AS example_source, any(detail) AS example_detail
  FROM dead_letters FINAL GROUP BY reason ORDER BY dead_letters DESC, reason`;

/** Observed tokens per harness, model and day, by kind, beside the estimates of the same group. */
export const USAGE_REPORT_SQL = `SELECT harness, model, toDate(ts) AS day,
    countIf(source = 'observed') AS requests,
    sumIf(input_tokens, source = 'observed') AS input_tokens,
    sumIf(cache_read_tokens, source = 'observed') AS cache_read_tokens,
    sumIf(cache_write_tokens, source = 'observed') AS cache_write_tokens,
    sumIf(output_tokens, source = 'observed') AS output_tokens,
    sumIf(reasoning_tokens, source = 'observed') AS reasoning_tokens,
    countIf(source = 'estimated') AS estimates,
    sumIf(estimated_tokens, source = 'estimated') AS estimated_tool_output_tokens,
    uniqExact(session_id) AS sessions
  FROM token_usage FINAL
  GROUP BY harness, model, day
  ORDER BY day, harness, model`;

/** Sessions that crossed the threshold: when, at what figure and percentage, from which source. */
export const BREACHES_REPORT_SQL = `SELECT session_id, harness, host, model, ts, used_tokens, context_window_tokens,
    round(usage_pct, 2) AS usage_pct, threshold_pct, headroom_tokens, source, event_kind, event_id
  FROM threshold_breaches FINAL
  ORDER BY ts, session_id`;

/**
 * Estimate vs observation for the same content: between two observed requests of a session,
 * the tool outputs' estimates against what the next request's input really grew by.
 */
export const DRIFT_REPORT_SQL = `SELECT harness, model, drift_content_class AS content_class,
    count() AS intervals,
    sum(drift_estimated_tokens) AS estimated_tokens,
    sum(drift_observed_tokens) AS observed_tokens,
    round(estimated_tokens / observed_tokens, 4) AS ratio,
    round((toInt64(estimated_tokens) - toInt64(observed_tokens)) / observed_tokens * 100, 2) AS error_pct,
    round(avg(abs(toInt64(drift_estimated_tokens) - toInt64(drift_observed_tokens)) / drift_observed_tokens) * 100, 2) AS mean_abs_error_pct
  FROM token_usage FINAL
  WHERE drift_observed_tokens IS NOT NULL
  GROUP BY harness, model, content_class
  ORDER BY harness, model, content_class`;

/**
 * Per MCP server (SPEC §7): how it behaved (share of observed time connected, reconnects and
 * since when, stale disconnects, restarts and restart-policy flags), which tools the model could
 * see (visibility in the latest snapshot of each session), and how its tools fared when called.
 * A server's lifecycle figures are summed over the sessions it appeared in. What its tools cost
 * before they are called: the estimated tokens of the model-visible tools of its latest snapshots
 * (per request now), the requests any of its tools was visible in and the tokens that put on them
 * (src/report/definitions.ts; the USD figure is added by withDefinitionCost).
 */
export const MCP_REPORT_SQL = `WITH
  per_session AS (
    SELECT session_id, agent_id, server,
      argMax(state, (ts, last_event_id)) AS s_state,
      argMax(since, (ts, last_event_id)) AS s_since,
      argMax(transport, (ts, last_event_id)) AS s_transport,
      argMax(connected_ms, (ts, last_event_id)) AS s_connected_ms,
      argMax(observed_ms, (ts, last_event_id)) AS s_observed_ms,
      argMax(reconnects, (ts, last_event_id)) AS s_reconnects,
      argMax(stale_disconnects, (ts, last_event_id)) AS s_stale_disconnects,
      argMax(restarts, (ts, last_event_id)) AS s_restarts,
      max(ts) AS last_seen,
      countIf(reconnects > 0) AS reconnect_windows,
      minIf(ts, reconnects > 0) AS first_reconnect
    FROM mcp_server_state FINAL
    GROUP BY session_id, agent_id, server
  ),
  session_end AS (
    SELECT session_id, max(ts) AS ended FROM (SELECT session_id, ts FROM tool_calls UNION ALL SELECT session_id, ts FROM mcp_events) GROUP BY session_id
  ),
  -- A server is observed until its session's last event: a connected server stays connected.
  per_session_to_end AS (
    SELECT p.*, greatest(toUnixTimestamp64Milli(e.ended) - toUnixTimestamp64Milli(p.last_seen), 0) AS tail_ms
    FROM per_session AS p LEFT JOIN session_end AS e ON e.session_id = p.session_id
  ),
  lifecycle AS (
    SELECT server,
      count() AS sessions,
      argMax(s_transport, last_seen) AS transport,
      argMax(s_state, last_seen) AS state,
      argMax(s_since, last_seen) AS since,
      sum(s_connected_ms + if(s_state = 'connected', tail_ms, 0)) AS connected_ms,
      sum(s_observed_ms + tail_ms) AS observed_ms,
      sum(s_reconnects) AS reconnects,
      if(sum(reconnect_windows) = 0, NULL, minIf(first_reconnect, reconnect_windows > 0)) AS flapping_since,
      sum(s_stale_disconnects) AS stale_disconnects,
      sum(s_restarts) AS restarts
    FROM per_session_to_end WHERE s_state != '' GROUP BY server
  ),
  policy AS (
    SELECT server, arrayStringConcat(groupArray(concat(replaceOne(flag, 'restart_', ''), '=', toString(n))), ' ') AS restart_flags
    FROM (SELECT server, flag, count() AS n FROM mcp_server_state FINAL ARRAY JOIN flags AS flag
          WHERE startsWith(flag, 'restart_') GROUP BY server, flag ORDER BY flag)
    GROUP BY server
  ),
  tools AS (
    SELECT server,
      uniqExactIf(qualified_name, visibility = 'model_visible') AS tools_model_visible,
      uniqExactIf(qualified_name, visibility = 'app_only') AS tools_app_only,
      uniqExactIf(qualified_name, visibility = 'search_only') AS tools_search_only,
      uniqExactIf(qualified_name, visibility = 'disabled') AS tools_disabled,
      uniqExactIf(qualified_name, length(flags) > 0) AS tools_flagged
    FROM mcp_tool_registrations FINAL
    WHERE (session_id, agent_id, server, snapshot_event_id) IN (
      SELECT session_id, agent_id, server, argMax(event_id, (ts, event_id)) FROM mcp_events FINAL
      WHERE event_kind = 'tools' GROUP BY session_id, agent_id, server)
    GROUP BY server
  ),
  -- What the model-visible tools of each session's latest snapshot cost per request (estimated
  -- tokens of their definitions), and what they cost over every request while visible.
  definitions AS (
    SELECT server, sum(t) AS definition_tokens FROM (
      SELECT server, qualified_name, argMax(definition_tokens, (ts, snapshot_event_id)) AS t
      FROM mcp_tool_registrations FINAL
      WHERE visibility = 'model_visible' AND (session_id, agent_id, server, snapshot_event_id) IN (
        SELECT session_id, agent_id, server, argMax(event_id, (ts, event_id)) FROM mcp_events FINAL
        WHERE event_kind = 'tools' GROUP BY session_id, agent_id, server)
      GROUP BY server, qualified_name)
    GROUP BY server
  ),
  ${DEFINITION_OVERHEAD_CTES},
  overhead AS (SELECT server, uniqExact(session_id, event_id) AS requests, sum(t) AS tokens FROM tool_overhead GROUP BY server),
  calls AS (
    SELECT mcp_server AS server, count() AS calls, countIf(status = 'error') AS errors
    FROM tool_calls FINAL WHERE ${MCP_CALL} GROUP BY server
  ),
  servers AS (
    SELECT server FROM (SELECT server FROM lifecycle UNION ALL SELECT server FROM tools UNION ALL SELECT server FROM calls) GROUP BY server
  )
SELECT s.server AS server,
    lifecycle.sessions AS sessions,
    lifecycle.transport AS transport,
    lifecycle.state AS state,
    lifecycle.since AS since,
    round(if(lifecycle.observed_ms = 0, NULL, lifecycle.connected_ms / lifecycle.observed_ms), 4) AS connected_share,
    lifecycle.reconnects AS reconnects,
    lifecycle.flapping_since AS flapping_since,
    lifecycle.stale_disconnects AS stale_disconnects,
    lifecycle.restarts AS restarts,
    policy.restart_flags AS restart_flags,
    tools.tools_model_visible AS model_visible,
    tools.tools_app_only AS app_only,
    tools.tools_search_only AS search_only,
    tools.tools_disabled AS disabled,
    tools.tools_flagged AS bad_names,
    definitions.definition_tokens AS definition_tokens,
    ifNull(overhead.requests, 0) AS requests_while_visible,
    if(requests_while_visible = 0, 0, overhead.tokens) AS definition_tokens_total,
    calls.calls AS calls,
    round(calls.errors / calls.calls, 4) AS error_share
  FROM servers AS s
  LEFT JOIN lifecycle ON lifecycle.server = s.server
  LEFT JOIN policy ON policy.server = s.server
  LEFT JOIN tools ON tools.server = s.server
  LEFT JOIN definitions ON definitions.server = s.server
  LEFT JOIN overhead ON overhead.server = s.server
  LEFT JOIN calls ON calls.server = s.server
  ORDER BY reconnects + restarts + stale_disconnects DESC, calls DESC, server
  SETTINGS join_use_nulls = 1`;

export const DISCOVERY_REPORT_GROUPINGS = ['model', 'tool', 'host'] as const;
export type DiscoveryReportGrouping = (typeof DISCOVERY_REPORT_GROUPINGS)[number];

/**
 * Discovery per model (SPEC §6): searches per turn (every turn with a tool call counts, so a
 * model that never searches shows 0), how often a turn ran into the budget, the 4th+ searches a
 * harness ran anyway, not-in-active-set refusals and how often the recovery they name followed
 * (search, then a successful call, in the same turn), and the share of MCP calls (MCP_CALL, as
 * `report tools` counts them) whose tool an earlier search of the session had listed.
 */
export const DISCOVERY_BY_MODEL_SQL = discoveryByKeySql('model');

/** The same per machine (`--by host`): does one machine's setup make models search more? */
export const DISCOVERY_BY_HOST_SQL = discoveryByKeySql('host');

function discoveryByKeySql(key: 'model' | 'host'): string {
  return `SELECT t.model AS model,
    t.turns AS turns,
    d.searches AS searches,
    round(if(t.turns = 0, 0, d.searches / t.turns), 3) AS searches_per_turn,
    d.turns_searching AS turns_searching,
    d.budget_refusals AS budget_refusals,
    round(if(d.turns_searching = 0, 0, d.turns_exhausted / d.turns_searching), 4) AS budget_exhaustion_rate,
    d.budget_exceeded AS budget_exceeded,
    d.refusals AS not_in_active_set,
    d.recovered AS recovered,
    round(if(d.refusals = 0, 0, d.recovered / d.refusals), 4) AS recovery_rate,
    t.mcp_calls AS mcp_calls,
    round(if(t.mcp_calls = 0, 0, d.after_search / t.mcp_calls), 4) AS share_after_search
  FROM (SELECT model, uniqExact(session_id, agent_id, turn_id) AS turns, countIf(${MCP_CALL}) AS mcp_calls FROM tool_calls FINAL GROUP BY model) AS t
  LEFT JOIN (
    SELECT model,
      countIf(discovery_kind = 'search') AS searches,
      uniqExactIf((session_id, agent_id, turn_id), discovery_kind = 'search') AS turns_searching,
      countIf(budget_refusal) AS budget_refusals,
      uniqExactIf((session_id, agent_id, turn_id), budget_refusal) AS turns_exhausted,
      countIf(has(flags, 'search_budget_exceeded')) AS budget_exceeded,
      countIf(discovery_kind = 'refusal') AS refusals,
      countIf(recovered) AS recovered,
      countIf(after_search) AS after_search
    FROM discovery_events FINAL GROUP BY model
  ) AS d ON d.model = t.model
  ORDER BY searches DESC, turns DESC, model`.replaceAll('model', key);
}

/**
 * The discovery funnel of the HTML report, in turns (a session, agent and turn id), so that every
 * step is a subset of the step it names in `of_step`: turns with a tool call; of those, turns
 * that searched; of those, turns with an MCP call whose tool a search had listed. And beside
 * it, of the turns with a tool call: turns with a not-in-active-set refusal; of those, turns
 * where the named search followed; of those, turns that recovered (a successful call of the tool).
 * A call without a turn id (Codex rollouts of builds that write none, some imports) cannot be
 * placed in a turn: `not_placed` counts, per step, the sessions whose calls without a turn id
 * would have met the step, and `not_placed_harnesses` names their harnesses.
 */
export const DISCOVERY_FUNNEL_SQL = `WITH
  calls AS (SELECT session_id, agent_id, turn_id, any(harness) AS harness FROM tool_calls FINAL GROUP BY session_id, agent_id, turn_id),
  flags AS (
    SELECT session_id, agent_id, turn_id,
      countIf(discovery_kind = 'search') > 0 AS searched,
      countIf(discovery_kind = 'call' AND after_search) > 0 AS listed_call,
      countIf(discovery_kind = 'refusal') > 0 AS refused,
      countIf(discovery_kind = 'refusal' AND recovery_searched) > 0 AS refusal_searched,
      countIf(discovery_kind = 'refusal' AND recovered) > 0 AS refusal_recovered
    FROM discovery_events FINAL GROUP BY session_id, agent_id, turn_id
  ),
  units AS (
    SELECT c.turn_id != '' AS placed, c.harness AS harness,
      ifNull(f.searched, false) AS searched, ifNull(f.listed_call, false) AS listed_call, ifNull(f.refused, false) AS refused,
      ifNull(f.refusal_searched, false) AS refusal_searched, ifNull(f.refusal_recovered, false) AS refusal_recovered
    FROM calls AS c LEFT JOIN flags AS f ON f.session_id = c.session_id AND f.agent_id = c.agent_id AND f.turn_id = c.turn_id
    SETTINGS join_use_nulls = 1
  ),
  steps AS (
    SELECT [
      tuple('turns with a tool call', '', countIf(placed), countIf(NOT placed), arraySort(groupUniqArrayIf(harness, NOT placed))),
      tuple('turns that searched', 'turns with a tool call', countIf(placed AND searched), countIf(NOT placed AND searched), arraySort(groupUniqArrayIf(harness, NOT placed AND searched))),
      tuple('searching turns with an MCP call a search had listed', 'turns that searched', countIf(placed AND searched AND listed_call), countIf(NOT placed AND searched AND listed_call), arraySort(groupUniqArrayIf(harness, NOT placed AND searched AND listed_call))),
      tuple('turns with a not-in-active-set refusal', 'turns with a tool call', countIf(placed AND refused), countIf(NOT placed AND refused), arraySort(groupUniqArrayIf(harness, NOT placed AND refused))),
      tuple('refusal turns that searched for the tool', 'turns with a not-in-active-set refusal', countIf(placed AND refusal_searched), countIf(NOT placed AND refusal_searched), arraySort(groupUniqArrayIf(harness, NOT placed AND refusal_searched))),
      tuple('refusal turns that recovered', 'refusal turns that searched for the tool', countIf(placed AND refusal_recovered), countIf(NOT placed AND refusal_recovered), arraySort(groupUniqArrayIf(harness, NOT placed AND refusal_recovered)))
    ] AS s FROM units
  )
SELECT tupleElement(x, 1) AS step, tupleElement(x, 2) AS of_step, tupleElement(x, 3) AS turns, tupleElement(x, 4) AS not_placed, tupleElement(x, 5) AS not_placed_harnesses
  FROM steps ARRAY JOIN s AS x`;

/**
 * Discovery per MCP tool: its MCP calls (MCP_CALL: the figure `report tools` gives the tool),
 * how many came after a search had listed it, how many were refused as not in active set, the rest
 * called directly; and the verdict SPEC §6 asks for to decide which tools belong inline: called
 * only after search (every call that ran), only directly, both, never searched for, searched and
 * not found, found and never called (a refused call did not run). A search "looked for" a tool when a word of its query is
 * the tool's own name or its qualified name (`deploy_service to staging` looks for
 * `k8s__deploy_service`); it "listed" it when its result named it.
 *
 * And what the tool costs before it is called (src/report/definitions.ts): its latest known
 * definition size in estimated tokens, the requests it was model-visible in and the tokens that
 * put on them (the USD figure is added by withDefinitionCost), and the advice: `keep inline` when
 * a model refused it as not in the active set did not search for it, `make discoverable` when it
 * was visible and never, or rarely (fewer than one direct call per REQUESTS_PER_DIRECT_CALL
 * requests while visible), called directly, `keep inline` when it was called directly, else
 * `discoverable works` when it was called after a search, else `remove or rename` (never called:
 * never searched for, searched for and not found, or found and not used).
 */
export const DISCOVERY_BY_TOOL_SQL = `WITH
  d AS (SELECT * FROM discovery_events FINAL),
  mcp AS (
    SELECT ${MCP_CALL_TOOL} AS tool, count() AS calls,
      countIf((session_id, agent_id, event_id) IN (SELECT session_id, agent_id, event_id FROM d WHERE discovery_kind = 'refusal')) AS refused
    FROM tool_calls FINAL WHERE ${MCP_CALL} GROUP BY tool
  ),
  known AS (
    SELECT tool FROM (
      SELECT qualified_name AS tool FROM mcp_tool_registrations FINAL WHERE length(flags) = 0
      UNION ALL SELECT tool FROM mcp
      UNION ALL SELECT called_tool AS tool FROM d WHERE discovery_kind = 'call'
      UNION ALL SELECT arrayJoin(result_tools) AS tool FROM d WHERE discovery_kind = 'search'
    ) GROUP BY tool
  ),
  visibility AS (SELECT qualified_name AS tool, argMax(visibility, ts) AS visibility FROM mcp_tool_registrations FINAL GROUP BY tool),
  called AS (SELECT called_tool AS tool, countIf(after_search) AS after_search FROM d WHERE discovery_kind = 'call' GROUP BY tool),
  searched AS (
    SELECT k.tool AS tool,
      countIf(has(s.result_tools, k.tool)) AS listed,
      countIf(has(s.words, lower(splitByString('__', k.tool)[2])) OR has(s.words, lower(k.tool))) AS looked_for
    FROM known AS k CROSS JOIN (
      SELECT splitByRegexp('[^a-z0-9_.-]+', replaceRegexpAll(lower(query), '^mcp__|[^a-z0-9_.-]mcp__', ' ')) AS words, result_tools
      FROM d WHERE discovery_kind = 'search') AS s
    GROUP BY k.tool
  ),
  -- A refusal is the tool its refused call named (an MCP call: its server and tool), so a bare
  -- name in the refusal's text is not counted against every server's tool of that name; only a
  -- refused call that names no MCP tool falls back to the text's name.
  refused AS (
    SELECT k.tool AS tool, count() AS refusals, countIf(r.recovered) AS recovered, countIf(NOT r.recovery_searched) AS unsearched
    FROM known AS k CROSS JOIN (
      SELECT rd.refused_tool AS refused_tool, rd.recovered AS recovered, rd.recovery_searched AS recovery_searched,
        rc.tool AS qualified
      FROM (SELECT session_id, agent_id, event_id, refused_tool, recovered, recovery_searched FROM d WHERE discovery_kind = 'refusal' AND refused_tool != '') AS rd
      LEFT JOIN (SELECT session_id, agent_id, event_id, ${MCP_CALL_TOOL} AS tool FROM tool_calls FINAL WHERE ${MCP_CALL}) AS rc
        ON rc.session_id = rd.session_id AND rc.agent_id = rd.agent_id AND rc.event_id = rd.event_id) AS r
    WHERE if(r.qualified != '', k.tool = r.qualified, k.tool = r.refused_tool OR endsWith(k.tool, concat('__', r.refused_tool)))
    GROUP BY k.tool
  ),
  -- The tool's latest known definition size, and what it cost over every request while visible.
  defs AS (
    SELECT qualified_name AS tool, argMax(definition_tokens, (definition_tokens IS NOT NULL, ts, snapshot_event_id)) AS definition_tokens
    FROM mcp_tool_registrations FINAL GROUP BY tool
  ),
  ${DEFINITION_OVERHEAD_CTES},
  overhead AS (SELECT tool, uniqExact(session_id, event_id) AS requests, sum(t) AS tokens FROM tool_overhead GROUP BY tool)
SELECT k.tool AS tool,
    splitByString('__', k.tool)[1] AS server,
    ifNull(visibility.visibility, '') AS visibility,
    ifNull(mcp.calls, 0) AS calls,
    ifNull(called.after_search, 0) AS calls_after_search,
    ifNull(mcp.refused, 0) AS calls_refused,
    greatest(toInt64(calls) - toInt64(calls_after_search) - toInt64(calls_refused), 0) AS calls_direct,
    ifNull(searched.listed, 0) AS listed_by_search,
    ifNull(searched.looked_for, 0) AS looked_for,
    ifNull(refused.refusals, 0) AS not_in_active_set,
    ifNull(refused.recovered, 0) AS recovered,
    multiIf(
      calls_direct = 0 AND calls_after_search > 0, 'called only after search',
      looked_for > 0 AND listed_by_search = 0, 'searched and not found',
      listed_by_search = 0 AND looked_for = 0, 'never searched for',
      calls_direct = 0 AND calls_after_search = 0, 'found, never called',
      calls_after_search = 0, 'called only directly',
      'called directly and after search') AS verdict,
    defs.definition_tokens AS definition_tokens,
    ifNull(overhead.requests, 0) AS requests_while_visible,
    if(requests_while_visible = 0, 0, overhead.tokens) AS definition_tokens_total,
    multiIf(
      ifNull(refused.unsearched, 0) > 0, 'keep inline',
      (requests_while_visible > 0 OR visibility = 'model_visible')
        AND (calls_direct = 0 OR calls_direct * ${REQUESTS_PER_DIRECT_CALL} < requests_while_visible), 'make discoverable',
      calls_direct > 0, 'keep inline',
      calls_after_search > 0, 'discoverable works',
      'remove or rename') AS advice
  FROM known AS k
  LEFT JOIN mcp ON mcp.tool = k.tool
  LEFT JOIN visibility ON visibility.tool = k.tool
  LEFT JOIN called ON called.tool = k.tool
  LEFT JOIN searched ON searched.tool = k.tool
  LEFT JOIN refused ON refused.tool = k.tool
  LEFT JOIN defs ON defs.tool = k.tool
  LEFT JOIN overhead ON overhead.tool = k.tool
  ORDER BY calls DESC, listed_by_search DESC, tool
  SETTINGS join_use_nulls = 1`;
