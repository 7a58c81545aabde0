#!/usr/bin/env python3
"""Independent figures for the Codebuff fixtures (plain json, no importer code), by the rules of
src/importers/codebuff/README.md (the readers' order, ccusage @ 5816e640 parser.rs):
a usage per assistant message (variant ai/agent/assistant or role assistant) with any figure;
each figure from metadata.usage, else metadata.codebuff.usage, else the newest assistant entry of
metadata.runState.sessionState.mainAgentState.messageHistory that has it (providerOptions.codebuff.usage);
input: inputTokens as is (cache apart), or prompt_tokens less its cached part (OpenAI)."""
import json, sys, pathlib, collections
root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent)
def first(o, keys):
    for k in keys:
        v = o.get(k)
        if isinstance(v, int) and v > 0: return v
    return None
per = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
for f in sorted(root.rglob("chat-messages.json")):
    chat = f.parent.name; project = f.parents[2].name; channel = f.parents[4].name
    sid = f"{channel}/{project}/{chat}"
    for m in json.loads(f.read_text()):
        if (m.get("variant") or m.get("role")) not in ("ai", "agent", "assistant"): continue
        md = m.get("metadata") or {}
        places = [md.get("usage"), (md.get("codebuff") or {}).get("usage")]
        hist = (((md.get("runState") or {}).get("sessionState") or {}).get("mainAgentState") or {}).get("messageHistory") or []
        places += [((e.get("providerOptions") or {}).get("codebuff") or {}).get("usage") for e in reversed(hist) if e.get("role") == "assistant"]
        fig = {}
        for u in places:
            if not isinstance(u, dict): continue
            if "in" not in fig:
                x = first(u, ["inputTokens", "input_tokens"])
                if x is not None: fig["in"] = x
                else:
                    x = first(u, ["promptTokens", "prompt_tokens"])
                    if x is not None: fig["in"] = x; fig["total"] = True
            for key, names in (("out", ["outputTokens", "output_tokens", "completionTokens", "completion_tokens"]), ("cw", ["cacheCreationInputTokens", "cache_creation_input_tokens", "cacheCreationTokens", "cache_creation_tokens"])):
                if key not in fig and first(u, names) is not None: fig[key] = first(u, names)
            cr = max(first(u, ["cacheReadInputTokens", "cache_read_input_tokens"]) or 0, (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
            if "cr" not in fig and cr > 0: fig["cr"] = cr
        if not any(fig.get(k) for k in ("in", "out", "cr", "cw")): continue
        i = fig.get("in", 0) - (fig.get("cr", 0) if fig.get("total") else 0)
        row = per[sid]; row[0] += 1; row[1] += i; row[2] += fig.get("out", 0); row[3] += fig.get("cr", 0); row[4] += fig.get("cw", 0)
for sid, row in sorted(per.items()): print(sid, "usage [rows, input, output, cache read, cache write]:", row)
