# Independent figures for Cline-format task folders (Cline, Roo Code, Kilo Code): plain json,
# no importer code. Usage: every say message api_req_started / deleted_api_reqs / subagent_usage
# whose JSON text holds a figure; input is the uncached input (Cline's tokensIn; Roo Code and
# Kilo Code: tokensIn minus the cache when the record reads as a total: apiProtocol "openai",
# or tokensIn >= cacheReads + cacheWrites). Calls: tool_use blocks and XML tags of the given tool
# names in assistant messages; MCP calls named server__tool.
# python3 figures.py <tasks folder> <cline|roo|kilo>
import json, os, re, sys, collections
root, family = sys.argv[1], sys.argv[2]
CLINE = 'ask_followup_question attempt_completion execute_command replace_in_file read_file write_to_file search_files list_files list_code_definition_names browser_action use_mcp_tool access_mcp_resource load_mcp_documentation new_task plan_mode_respond act_mode_respond focus_chain web_fetch web_search condense summarize_task report_bug new_rule apply_patch generate_explanation use_skill use_subagents'.split()
ROO = 'execute_command read_file read_command_output write_to_file apply_diff edit search_and_replace search_replace edit_file apply_patch search_files list_files use_mcp_tool access_mcp_resource ask_followup_question attempt_completion switch_mode new_task codebase_search update_todo_list run_slash_command skill generate_image list_code_definition_names insert_content browser_action fetch_instructions'.split()
tools = set(CLINE if family == 'cline' else ROO + (['fast_edit_file', 'new_rule', 'report_bug', 'condense', 'delete_file'] if family == 'kilo' else []))
for dirpath, _, names in sorted(os.walk(root)):
    if 'ui_messages.json' not in names: continue
    task = os.path.basename(dirpath)
    u = collections.Counter(); n = 0
    for m in json.load(open(os.path.join(dirpath, 'ui_messages.json'))):
        if m.get('type') != 'say' or m.get('say') not in ('api_req_started', 'deleted_api_reqs', 'subagent_usage'): continue
        info = json.loads(m['text'])
        f = [info.get(k) for k in ('tokensIn', 'tokensOut', 'cacheWrites', 'cacheReads')]
        if all(x is None for x in f): continue
        tin, tout, cw, cr = (x or 0 for x in f)
        if family != 'cline' and cr + cw > 0 and (info.get('apiProtocol') == 'openai' or tin >= cr + cw): tin -= cr + cw
        n += 1; u['input'] += tin; u['output'] += tout; u['cache_read'] += cr; u['cache_write'] += cw
    calls = collections.Counter(); status = collections.Counter()
    hist = json.load(open(os.path.join(dirpath, 'api_conversation_history.json')))
    for i, m in enumerate(hist):
        if m['role'] != 'assistant': continue
        for b in m['content'] if isinstance(m['content'], list) else [{'type': 'text', 'text': m['content']}]:
            if b['type'] == 'tool_use':
                name = b['name']; mm = re.match(r'^mcp(?:--|__)(.+?)(?:--|__)(.+)$', name)
                if name == 'use_mcp_tool': name = b['input']['server_name'] + '__' + b['input']['tool_name']
                elif mm: name = mm.group(1) + '__' + mm.group(2)
                calls[name] += 1
            elif b['type'] == 'text':
                for t in re.findall(r'<([a-z_]+)>', b['text']):
                    if t in tools and '</%s>' % t in b['text']:
                        if t == 'use_mcp_tool':
                            t = re.search(r'<server_name>(.*?)</server_name>', b['text']).group(1) + '__' + re.search(r'<tool_name>(.*?)</tool_name>', b['text']).group(1)
                        calls[t] += 1
    print(task, 'usage', n, dict(u), 'calls', sum(calls.values()), dict(sorted(calls.items())))
