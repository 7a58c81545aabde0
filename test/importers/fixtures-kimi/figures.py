#!/usr/bin/env python3
"""Independent figures for the Kimi fixtures (plain json, no importer code), after
/work/research-33/kimi/figures.py, extended to the legacy subagent logs.

Kimi Code: a session = one session_<uuid> dir; each agents/<agentId>/wire.jsonl is one agent.
Usage = every `usage.record` (any usageScope); `step.end` repeats it and is not added.
Calls = `tool.call` loop events (unique toolCallId per agent), joined to `tool.result`.

Kimi CLI: a session = <md5>/<uuid>; its subagents are <uuid>/subagents/<agent_id>/wire.jsonl.
Usage = StatusUpdate.token_usage, in a log or forwarded into the parent as SubagentEvent,
counted once per (session, message_id). Calls = ToolCall messages of each log (ToolCallPart
appended), SubagentEvent-forwarded calls not counted again.
Prints per session: usage rows, input (other), output, cache read, cache creation; calls by tool.
"""
import json, sys, pathlib, collections
root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent)
usage = collections.defaultdict(lambda: [0, 0, 0, 0, 0]); calls = collections.defaultdict(collections.Counter)
status = collections.Counter()
for f in sorted(root.glob("kimi-code/sessions/*/*/agents/*/wire.jsonl")):
    sid = f.parents[2].name.removeprefix("session_"); seen = {}; res = {}
    for l in f.read_text().splitlines():
        r = json.loads(l)
        if r.get("type") == "usage.record":
            u = r["usage"]; row = usage[sid]; row[0] += 1
            for i, k in enumerate(("inputOther", "output", "inputCacheRead", "inputCacheCreation")): row[i + 1] += u.get(k, 0)
        elif r.get("type") == "context.append_loop_event":
            e = r["event"]
            if e["type"] == "tool.call": seen.setdefault(e["toolCallId"], e["name"])
            if e["type"] == "tool.result": res[e["toolCallId"]] = "error" if (e["result"] or {}).get("isError") else "ok"
    for cid, name in seen.items():
        calls[sid][name.removeprefix("mcp__")] += 1; status[res.get(cid, "pending")] += 1
mids = collections.defaultdict(set)
legacy = sorted(root.glob("kimi-legacy/sessions/*/*/wire.jsonl")) + sorted(root.glob("kimi-legacy/sessions/*/*/subagents/*/wire.jsonl"))
for f in legacy:
    sid = f.parent.name if f.parent.parent.name != "subagents" else f.parents[2].name
    seen = {}; last = None; res = {}
    for l in f.read_text().splitlines():
        r = json.loads(l); m = r.get("message") or {}; t = m.get("type"); p = m.get("payload") or {}
        if t == "SubagentEvent": t, p = p["event"]["type"], p["event"]["payload"]; forwarded = True
        else: forwarded = False
        if t == "StatusUpdate" and p.get("token_usage"):
            if p["message_id"] in mids[sid]: continue
            mids[sid].add(p["message_id"]); u = p["token_usage"]; row = usage[sid]; row[0] += 1
            for i, k in enumerate(("input_other", "output", "input_cache_read", "input_cache_creation")): row[i + 1] += u.get(k, 0)
        elif forwarded: continue
        elif t == "ToolCall": last = p["id"]; seen[last] = p["function"]["name"]
        elif t == "ToolResult": res[p["tool_call_id"]] = "error" if p["return_value"].get("is_error") else "ok"
    for cid, name in seen.items():
        calls[sid][name] += 1; status[res.get(cid, "pending")] += 1
for sid in sorted(set(usage) | set(calls)):
    print(sid, "usage", usage[sid], "calls", dict(sorted(calls[sid].items())))
print("status", dict(status))
