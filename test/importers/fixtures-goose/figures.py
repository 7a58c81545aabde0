#!/usr/bin/env python3
"""Independent figures for Goose sessions.db (python3 sqlite3); copied from /work/research-33/goose/figures.py, no importer code.

Sessions = rows of `sessions` (by session_type). Calls = `toolRequest` blocks in assistant
messages.content_json (name = toolCall.value.name), matched to `toolResponse` blocks by id.
Tokens = one usage per `usage_ledger` row (schema >= v16); input_tokens there INCLUDES cache read
(total_tokens = input + output), so fresh input = input - cache_read. Session accumulated_* columns
are totals of the same requests and are printed only as a cross-check.
"""
import sqlite3, json, sys, pathlib, collections
db = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "goose/sessions/sessions.db")
c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
print("sessions by type:", dict(c.execute("select session_type, count(*) from sessions group by 1").fetchall()))
calls = collections.Counter(); res = {}; ids = {}
for role, cj in c.execute("select role, content_json from messages order by id"):
    try: blocks = json.loads(cj)
    except ValueError: continue
    for b in blocks:
        if b.get("type") in ("toolRequest", "frontendToolRequest"):
            ids[b["id"]] = (b.get("toolCall") or {}).get("value", {}).get("name")
        if b.get("type") == "toolResponse":
            v = (b.get("toolResult") or {})
            res[b["id"]] = "error" if v.get("status") != "success" or (v.get("value") or {}).get("isError") else "ok"
for i, n in ids.items(): calls[n] += 1
print("calls by tool:", dict(calls), "results:", collections.Counter(res.get(i, "none") for i in ids))
t = collections.Counter(); n = 0
for sid, inp, out, tot, cr, cw, comp in c.execute("select session_id, input_tokens, output_tokens, total_tokens, cache_read_tokens, cache_write_tokens, is_compaction from usage_ledger"):
    inp, out, cr, cw = inp or 0, out or 0, cr or 0, cw or 0
    if inp + out + cr + cw == 0: continue
    n += 1; assert tot in (None, inp + out)
    t.update(input_fresh=inp - cr, cache_read=cr, cache_write=cw, output=out, compaction_rows=comp)
print("ledger rows with tokens:", n, "tokens:", dict(t))
print("accumulated_* cross-check:", c.execute("select sum(accumulated_input_tokens), sum(accumulated_output_tokens), sum(accumulated_cache_read_tokens) from sessions").fetchone())
