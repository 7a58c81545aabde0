#!/usr/bin/env python3
"""Hermes figures (copied from /work/research-33/hermes/figures.py; python3 sqlite3, no importer code): sessions and tokens from state.db `sessions` (per-session totals: input, output,
cache read, cache write, reasoning; api_call_count = requests); calls from `messages.tool_calls`
(OpenAI-style JSON list, name = function.name) joined to role='tool' rows by tool_call_id."""
import sqlite3, json, sys, pathlib, collections
db = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "dot-hermes/state.db")
c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
print("sessions by source:", dict(c.execute("select source, count(*) from sessions group by 1").fetchall()))
print("tokens:", dict(zip(["input","output","cache_read","cache_write","reasoning","api_calls"],
      c.execute("select sum(input_tokens),sum(output_tokens),sum(cache_read_tokens),sum(cache_write_tokens),sum(reasoning_tokens),sum(api_call_count) from sessions").fetchone())))
calls = collections.Counter(); ids = {}
for (tc,) in c.execute("select tool_calls from messages where tool_calls is not null"):
    for t in json.loads(tc): ids[t["id"]] = t["function"]["name"]
res = {r[0] for r in c.execute("select tool_call_id from messages where role='tool'")}
for i, n in ids.items(): calls[n] += 1
print("calls by tool:", dict(calls), "with result:", len(set(ids) & res))
