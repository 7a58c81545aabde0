#!/usr/bin/env python3
"""Independent figures for Factory Droid sessions (copied from /work/research-33/droid/figures.py; plain json, no importer code).

Counts: a session = one <id>.jsonl (session id = session_start.id, else file stem);
tool calls = `tool_use` blocks in assistant `message` entries, deduplicated by block id;
results = `tool_result` blocks (matched by tool_use_id);
tokens = the sibling <id>.settings.json `tokenUsage` (session totals: Droid keeps no per-request usage).
"""
import json, sys, collections, pathlib

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent)
sessions = {}
calls = collections.Counter(); seen = set(); results = set(); errors = 0
tokens = collections.Counter()
for f in sorted(root.rglob("*.jsonl")):
    sid = f.stem
    for line in f.read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        if r.get("type") == "session_start" and r.get("id"):
            sid = r["id"]
        if r.get("type") != "message":
            continue
        m = r.get("message") or {}
        for b in m.get("content") or []:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use" and (sid, b.get("id")) not in seen:
                seen.add((sid, b.get("id"))); calls[b.get("name")] += 1
            if b.get("type") == "tool_result":
                results.add((sid, b.get("tool_use_id")))
                c = b.get("content")
                if b.get("is_error") or (isinstance(c, str) and c.startswith("Error:")):
                    errors += 1
    sessions[sid] = f
    st = f.with_name(f.stem + ".settings.json")
    if st.exists():
        u = json.loads(st.read_text()).get("tokenUsage") or {}
        for k in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens", "thinkingTokens"):
            tokens[k] += int(u.get(k) or 0)
print("sessions:", len(sessions), sorted(sessions))
print("tool calls by name:", dict(calls), "total", sum(calls.values()))
print("calls with a result:", len(seen & results), "results that look like errors:", errors)
print("tokens (settings.json totals):", dict(tokens))
