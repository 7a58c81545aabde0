# Independent figures for pi session files (pi, and OpenClaw which writes the same entries):
# plain json, no importer code. Fork copies are not taken out (none in the real samples).
import json, sys, collections
for f in sys.argv[1:]:
    usage = collections.Counter(); n_usage = 0; zero = 0
    calls = {}; stops = {}; results = {}; apis = collections.Counter(); tools = collections.Counter()
    header = None; roles = collections.Counter()
    for line in open(f, encoding='utf-8'):
        if not line.strip(): continue
        o = json.loads(line)
        if o['type'] == 'session': header = o; continue
        if o['type'] != 'message': continue
        m = o['message']; roles[m['role']] += 1
        if m['role'] == 'assistant':
            apis[m.get('api')] += 1
            u = m.get('usage') or {}
            inp, out, cr, cw = (u.get(k, 0) for k in ('input', 'output', 'cacheRead', 'cacheWrite'))
            if inp + out + cr + cw == 0: zero += 1
            else:
                n_usage += 1
                # google-generative-ai / google-vertex: input holds the cached tokens too
                if cr > 0 and inp >= cr and u.get('totalTokens') == inp + out: inp -= cr; usage['google_fix'] += 1
                usage['input'] += inp; usage['output'] += out; usage['cacheRead'] += cr; usage['cacheWrite'] += cw
            for b in m['content']:
                if b.get('type') == 'toolCall': calls[b['id']] = b['name']; stops[b['id']] = m.get('stopReason')
        elif m['role'] == 'toolResult':
            d = m.get('details')
            # OpenClaw's tools: a failure inside a result whose isError is false
            results[m['toolCallId']] = m.get('isError', False) is True or (isinstance(d, dict) and d.get('status') == 'error')
    for cid, name in calls.items(): tools[name] += 1
    errors = sum(1 for c in calls if results.get(c) is True)
    pending = sum(1 for c in calls if c not in results and stops[c] not in ('error', 'aborted'))
    notrun = sum(1 for c in calls if c not in results and stops[c] in ('error', 'aborted'))
    print('  status: ok', len(calls) - errors - pending - notrun, 'error (isError)', errors, 'error (never ran)', notrun, 'pending', pending)
    print(f, 'header:', {k: header.get(k) for k in ('id', 'version', 'parentSession')})
    print('  roles', dict(roles), 'apis', dict(apis))
    print('  usage events', n_usage, 'zero-usage', zero, dict(usage))
    print('  calls', len(calls), dict(tools.most_common()), 'errors',  'results without call', len(set(results) - set(calls)))
