#!/usr/bin/env python3
"""Per-file reference figures of the shared corpus's Claude Code transcripts and Codex rollouts.

Independent of the importer: plain json over the raw lines, following the definitions of the
corpus README (../shared/corpus/README.md, "Reference figures"), applied to each file alone.

  Claude Code: a response is an assistant record's (message.id, requestId); its usage is the one
  on its last line in the file (the early lines of a streamed response carry partial output).
  A tool call is a tool_use block (distinct id), an error when its tool_result says is_error.
  Codex: usage is the deltas of the cumulative info.total_token_usage of token_count events; a
  total equal to the previous one adds nothing and is no request. Tool calls are function_call,
  custom_tool_call and local_shell_call payloads (in the envelope or bare, the legacy format),
  distinct call_id per file.

Usage: python3 corpus_figures.py <corpus root>   (prints the JSON kept in corpus-figures.json)
"""
import json, os, re, sys
from collections import Counter

def records(path):
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.strip():
                yield json.loads(line)

def claude(path):
    usage = {}          # (message.id, requestId) -> usage of its last line
    calls = {}          # tool_use id -> name
    errors = set()
    sessions = set()
    for r in records(path):
        if r.get('sessionId'):
            sessions.add(r['sessionId'])
        m = r.get('message')
        if not isinstance(m, dict):
            continue
        content = m.get('content') if isinstance(m.get('content'), list) else []
        if r.get('type') == 'assistant':
            if isinstance(m.get('usage'), dict):
                usage[(m.get('id'), r.get('requestId'))] = m['usage']
            for b in content:
                if b.get('type') == 'tool_use':
                    calls[b['id']] = b['name']
        elif r.get('type') == 'user':
            for b in content:
                if b.get('type') == 'tool_result' and b.get('is_error') is True:
                    errors.add(b['tool_use_id'])
    u = list(usage.values())
    return {
        'sessions': sorted(sessions),
        'responses': len(u),
        'input': sum(x.get('input_tokens', 0) for x in u),
        'output': sum(x.get('output_tokens', 0) for x in u),
        'cache_write': sum(x.get('cache_creation_input_tokens', 0) for x in u),
        'cache_read': sum(x.get('cache_read_input_tokens', 0) for x in u),
        'calls': len(calls),
        'errors': len(errors & set(calls)),
        'by_tool': dict(sorted(Counter(calls.values()).items())),
    }

CALL_TYPES = ('function_call', 'custom_tool_call', 'local_shell_call')
KINDS = ('input_tokens', 'cached_input_tokens', 'output_tokens', 'reasoning_output_tokens')

def codex(path):
    session = re.search(r'([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$', path).group(1)
    prev = None
    requests = 0
    sums = Counter()
    calls = {}
    for r in records(path):
        p = r.get('payload') if isinstance(r.get('payload'), dict) else r
        if r.get('type') == 'event_msg' and p.get('type') == 'token_count':
            info = p.get('info')
            if not isinstance(info, dict) or not isinstance(info.get('total_token_usage'), dict):
                continue
            total = {k: info['total_token_usage'].get(k, 0) for k in KINDS}
            if total == prev:
                continue
            for k in KINDS:
                sums[k] += total[k] - (prev or {}).get(k, 0)
            prev = total
            requests += 1
        elif p.get('type') in CALL_TYPES:
            cid = p.get('call_id') or p.get('id')
            name = 'shell' if p['type'] == 'local_shell_call' else p.get('name')
            calls.setdefault(cid, name)
    return {
        'session': session,
        'requests': requests,
        'input': sums['input_tokens'],
        'cached': sums['cached_input_tokens'],
        'output': sums['output_tokens'],
        'reasoning': sums['reasoning_output_tokens'],
        'calls': len(calls),
        'by_tool': dict(sorted(Counter(calls.values()).items())),
    }

def main(root):
    out = {'_note': 'Made by test/importers/figures/corpus_figures.py from the shared corpus (python3, plain json, no importer code); '
                    'checked by test/importers/corpus-figures.test.ts. Regenerate: python3 test/importers/figures/corpus_figures.py ../shared/corpus > test/importers/figures/corpus-figures.json',
           'claude-code': {}, 'codex': {}}
    for harness, fn in (('claude-code', claude), ('codex', codex)):
        for d, _, files in os.walk(os.path.join(root, harness)):
            for f in files:
                if f.endswith('.jsonl'):
                    p = os.path.join(d, f)
                    out[harness][os.path.relpath(p, root)] = fn(p)
        out[harness] = dict(sorted(out[harness].items()))
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    print()

main(sys.argv[1])
