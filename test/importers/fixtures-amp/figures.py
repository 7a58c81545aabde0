#!/usr/bin/env python3
"""Independent figures for Amp thread files (threads/T-*.json); copied from the research folder (/work/research-33/amp/figures.py), no importer code. Usage: python3 figures.py [root]

Counts: session = one thread file (id = file stem T-…, else `id`).
Calls = assistant `tool_use` blocks (unique per thread by id); status from the matching
`tool_result` (`toolUseID` or `tool_use_id`) `run.status` (done / error / cancelled / rejected-by-user).
Tokens = assistant `messages[].usage` (current schema) — one record per assistant message; when a
thread has `usageLedger.events`, those are used instead (legacy: tokens.input/output, cache from the
message named by toMessageId). Buckets printed as Amp labels them, plus totals by the agentsview rule
(gpt-* models: cacheCreationInputTokens is uncached input, not a cache write).
"""
import json, sys, collections, pathlib
root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent)
sessions = 0; calls = collections.Counter(); status = collections.Counter()
raw = collections.Counter(); norm = collections.Counter(); requests = 0
for f in sorted(root.rglob("*.json")):
    t = json.loads(f.read_text())
    if not isinstance(t, dict) or "messages" not in t: continue
    sessions += 1
    ids = {}
    res = {}
    for m in t["messages"]:
        for b in m.get("content") or []:
            if b.get("type") == "tool_use" and m.get("role") == "assistant":
                ids.setdefault(b["id"], b["name"])
            if b.get("type") == "tool_result":
                res[b.get("toolUseID") or b.get("tool_use_id")] = (b.get("run") or {}).get("status", "done")
    for cid, name in ids.items():
        calls[name] += 1; status[res.get(cid, "pending")] += 1
    ledger = (t.get("usageLedger") or {}).get("events")
    if ledger:
        cache = {m.get("messageId"): m.get("usage") or {} for m in t["messages"]}
        for e in ledger:
            requests += 1
            u = cache.get(e.get("toMessageId"), {})
            raw["input"] += e["tokens"].get("input", 0); raw["output"] += e["tokens"].get("output", 0)
            raw["cacheRead"] += u.get("cacheReadInputTokens", 0); raw["cacheCreation"] += u.get("cacheCreationInputTokens", 0)
        continue
    for m in t["messages"]:
        u = m.get("usage")
        if m.get("role") != "assistant" or not u: continue
        requests += 1
        i, o = u.get("inputTokens", 0), u.get("outputTokens", 0)
        cr, cw = u.get("cacheReadInputTokens", 0), u.get("cacheCreationInputTokens", 0)
        raw.update(input=i, output=o, cacheRead=cr, cacheCreation=cw)
        if str(u.get("model", "")).startswith("gpt-"):
            norm.update(input=i + cw, output=o, cache_read=cr)
        else:
            norm.update(input=i, output=o, cache_read=cr, cache_write=cw)
        assert u.get("totalInputTokens", i + cr + cw) == i + cr + cw, "totalInputTokens != sum"
print("sessions:", sessions, "usage records:", requests)
print("calls by tool:", dict(calls), "statuses:", dict(status))
print("tokens as logged:", dict(raw))
print("tokens normalised (gpt-* cache creation -> input):", dict(norm))
