#!/usr/bin/env python3
"""Aider figures (copied from /work/research-33/aider/figures.py; plain text, no importer code) from .aider.chat.history.md.
Session = a `# aider chat started at <time>` header. Request = a `> Tokens: …` line
(aider prints one per LLM call: `Tokens: <sent> sent[, <n> cache write][, <n> cache hit], <recv> received[. Cost: $x message, $y session.]`).
Figures are aider's rounded display values (1.2k = 1200) — lossy by design.
Edits/commands counted from `> Applied edit to`, `> Running `, `> Commit ` lines (aider has no tool calls).
"""
import re, sys, pathlib, collections
f = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "projects/calc/.aider.chat.history.md")
num = lambda s: round(float(s[:-1]) * 1000) if s.endswith("k") else int(s.replace(",", ""))
sessions = 0; tok = collections.Counter(); n = 0; acts = collections.Counter(); models = collections.Counter()
for line in f.read_text(errors="replace").splitlines():
    if line.startswith("# aider chat started at"): sessions += 1
    m = re.match(r"> (?:Main )?[Mm]odel: (\S+)", line)
    if m: models[m.group(1)] += 1
    if line.startswith("> Tokens:"):
        n += 1
        for val, kind in re.findall(r"([\d.,]+k?) (sent|received|cache write|cache hit)", line):
            tok[kind] += num(val)
    for k, p in (("edit", "> Applied edit to "), ("shell", "> Running "), ("commit", "> Commit ")):
        if line.startswith(p): acts[k] += 1
print("sessions:", sessions, "requests:", n, "models:", dict(models))
print("tokens (rounded display values):", dict(tok))
print("actions:", dict(acts))
