// The tool catalogue: one declaration row per tool, per family (SPEC §6). Data only.
//
// This module has zero imports (a test reads it as text and fails on any import): it is the
// single source every other list is derived from (read-only set, per-namespace sets, the
// README table), so it must not depend on anything that could drift.
//
// A row:
//   ns        the family (namespace) that declares the tool
//   name      the tool name exactly as the family spells it
//   kind      the ACP ToolKind
//   label     a short human label
//   readOnly  true when a call cannot change the workspace or the outside world
//             (agent-internal state such as a todo list or a plan does not count)
//   input     canonical field -> raw parameter names (aliases, first present wins);
//             null when the tool has no stable projection (then CanonicalToolMeta.input is omitted)
//   large     raw fields that carry bulk content (never projected)
//   specific  raw fields that are family-specific flags or options (not projected)
//   note      where the parameter names come from, when not from the family's public schema
//   discovery 'search' on the family's tool-search meta-tool (SPEC §6): its calls are the
//             discovery events (query, the tools the result named, budget refusals)

export const CATALOGUE = [
  // ---------------------------------------------------------------- grok_build (PascalCase family)
  { ns: 'grok_build', name: 'ReadFile', kind: 'read', label: 'Read file', readOnly: true,
    input: { path: ['file_path', 'path'], offset: ['offset'], limit: ['limit'] }, large: [], specific: [] },
  { ns: 'grok_build', name: 'WriteFile', kind: 'edit', label: 'Write file', readOnly: false,
    input: { path: ['file_path', 'path'] }, large: ['content'], specific: [] },
  { ns: 'grok_build', name: 'SearchReplace', kind: 'edit', label: 'Search and replace', readOnly: false,
    input: { path: ['file_path', 'path'] }, large: ['old_string', 'new_string'], specific: ['replace_all'] },
  { ns: 'grok_build', name: 'Bash', kind: 'execute', label: 'Run command', readOnly: false,
    input: { command: ['command'], description: ['description'], cwd: ['cwd', 'workdir'] }, large: [], specific: ['timeout', 'run_in_background'] },
  { ns: 'grok_build', name: 'Grep', kind: 'search', label: 'Search file contents', readOnly: true,
    input: { pattern: ['pattern'], path: ['path'], limit: ['head_limit', 'limit'] }, large: [], specific: ['glob', 'type', 'output_mode', '-i', '-n', '-A', '-B', '-C'] },
  { ns: 'grok_build', name: 'Glob', kind: 'search', label: 'Find files', readOnly: true,
    input: { pattern: ['pattern'], path: ['path'] }, large: [], specific: [] },
  { ns: 'grok_build', name: 'ListDir', kind: 'read', label: 'List directory', readOnly: true,
    input: { directory: ['path', 'directory'] }, large: [], specific: ['ignore'] },
  { ns: 'grok_build', name: 'WebFetch', kind: 'fetch', label: 'Fetch URL', readOnly: true,
    input: null, large: [], specific: ['url', 'prompt'] },
  { ns: 'grok_build', name: 'WebSearch', kind: 'search', label: 'Web search', readOnly: true,
    input: { pattern: ['query'] }, large: [], specific: [] },
  { ns: 'grok_build', name: 'Task', kind: 'other', label: 'Run subagent', readOnly: false,
    input: { description: ['description'] }, large: ['prompt'], specific: ['subagent_type'] },
  { ns: 'grok_build', name: 'TodoWrite', kind: 'think', label: 'Update todo list', readOnly: true,
    input: null, large: ['todos'], specific: [] },
  // Tool names written by the Grok Build CLI 1.0.x into chat_history.jsonl (third-party fixtures;
  // research notes §h). list_dir / glob_file_search / codebase_search parameter names follow
  // the Cursor-agent naming that this tool set overlaps with (inferred).
  { ns: 'grok_build', name: 'read_file', kind: 'read', label: 'Read file', readOnly: true,
    input: { path: ['target_file', 'file_path'], offset: ['offset'], limit: ['limit'] }, large: [], specific: [],
    note: 'target_file seen in Grok Build 1.0.3 fixtures; file_path in other third-party tests' },
  { ns: 'grok_build', name: 'run_terminal_cmd', kind: 'execute', label: 'Run command', readOnly: false,
    input: { command: ['command'], description: ['explanation'], cwd: ['cwd'] }, large: [], specific: ['is_background'] },
  { ns: 'grok_build', name: 'search_replace', kind: 'edit', label: 'Search and replace', readOnly: false,
    input: { path: ['file_path'] }, large: ['old_string', 'new_string'], specific: ['replace_all'] },
  { ns: 'grok_build', name: 'write', kind: 'edit', label: 'Write file', readOnly: false,
    input: { path: ['file_path'] }, large: ['content'], specific: [] },
  { ns: 'grok_build', name: 'web_fetch', kind: 'fetch', label: 'Fetch URL', readOnly: true,
    input: null, large: [], specific: ['url'] },
  { ns: 'grok_build', name: 'grep', kind: 'search', label: 'Search file contents', readOnly: true,
    input: { pattern: ['pattern'], path: ['path'], limit: ['head_limit'] }, large: [], specific: ['glob', 'type', 'output_mode', '-i'] },
  { ns: 'grok_build', name: 'codebase_search', kind: 'search', label: 'Semantic code search', readOnly: true,
    input: { pattern: ['query'] }, large: [], specific: ['target_directories', 'explanation'], note: 'parameter names inferred' },
  { ns: 'grok_build', name: 'list_dir', kind: 'read', label: 'List directory', readOnly: true,
    input: { directory: ['target_directory', 'path'] }, large: [], specific: ['ignore_globs'], note: 'parameter names inferred' },
  { ns: 'grok_build', name: 'glob_file_search', kind: 'search', label: 'Find files', readOnly: true,
    input: { pattern: ['glob_pattern', 'pattern'], path: ['target_directory', 'path'] }, large: [], specific: [], note: 'parameter names inferred' },
  { ns: 'grok_build', name: 'todo_write', kind: 'think', label: 'Update todo list', readOnly: true,
    input: null, large: ['todos'], specific: ['merge'] },

  // ---------------------------------------------------------------- grok_build_concise
  { ns: 'grok_build_concise', name: 'read_file', kind: 'read', label: 'Read file', readOnly: true,
    input: { path: ['file_path', 'path'], offset: ['offset'], limit: ['limit'] }, large: [], specific: [] },
  { ns: 'grok_build_concise', name: 'search_replace', kind: 'edit', label: 'Search and replace', readOnly: false,
    input: { path: ['file_path', 'path'] }, large: ['old_string', 'new_string'], specific: ['replace_all'] },
  { ns: 'grok_build_concise', name: 'bash', kind: 'execute', label: 'Run command', readOnly: false,
    input: { command: ['command'], description: ['description'], cwd: ['cwd'] }, large: [], specific: ['timeout'] },

  // ---------------------------------------------------------------- grok_build_hashline
  // Hashline semantics: reads return line-hash anchors, edits address lines by those anchors.
  { ns: 'grok_build_hashline', name: 'read_file', kind: 'read', label: 'Read file (hashline)', readOnly: true,
    input: { path: ['file_path', 'path'], offset: ['offset'], limit: ['limit'] }, large: [], specific: [] },
  { ns: 'grok_build_hashline', name: 'edit', kind: 'edit', label: 'Edit by line anchors', readOnly: false,
    input: { path: ['file_path', 'path'] }, large: ['edits'], specific: [] },
  { ns: 'grok_build_hashline', name: 'grep', kind: 'search', label: 'Search file contents (hashline)', readOnly: true,
    input: { pattern: ['pattern'], path: ['path'], limit: ['limit'] }, large: [], specific: ['include', 'case_sensitive'] },

  // ---------------------------------------------------------------- codex (codex-rs tools/spec.rs)
  { ns: 'codex', name: 'apply_patch', kind: 'edit', label: 'Apply patch', readOnly: false,
    input: null, large: ['input'], specific: [], note: 'freeform tool: the raw input is the patch text itself' },
  { ns: 'codex', name: 'read_file', kind: 'read', label: 'Read file', readOnly: true,
    input: { path: ['file_path'], offset: ['offset'], limit: ['limit'] }, large: [], specific: ['mode', 'indentation'] },
  { ns: 'codex', name: 'list_dir', kind: 'read', label: 'List directory', readOnly: true,
    input: { directory: ['dir_path'], offset: ['offset'], limit: ['limit'] }, large: [], specific: ['depth'] },
  { ns: 'codex', name: 'grep_files', kind: 'search', label: 'Search file contents', readOnly: true,
    input: { pattern: ['pattern'], path: ['path'], limit: ['limit'] }, large: [], specific: ['include'] },
  { ns: 'codex', name: 'shell', kind: 'execute', label: 'Run command', readOnly: false,
    input: { command: ['command'], cwd: ['workdir', 'working_directory'] }, large: [], specific: ['timeout_ms', 'sandbox_permissions', 'with_escalated_permissions', 'justification', 'prefix_rule'],
    note: 'command is an argv array; the projection keeps the script of ["bash","-lc",script]; local_shell_call names the directory working_directory' },
  { ns: 'codex', name: 'shell_command', kind: 'execute', label: 'Run command', readOnly: false,
    input: { command: ['command'], cwd: ['workdir'] }, large: [], specific: ['timeout_ms', 'login', 'sandbox_permissions', 'justification'] },
  { ns: 'codex', name: 'exec_command', kind: 'execute', label: 'Run command (unified exec)', readOnly: false,
    input: { command: ['cmd'], cwd: ['workdir'] }, large: [], specific: ['shell', 'login', 'tty', 'yield_time_ms', 'max_output_tokens'] },
  { ns: 'codex', name: 'write_stdin', kind: 'execute', label: 'Write to running command', readOnly: false,
    input: null, large: ['chars'], specific: ['session_id', 'yield_time_ms', 'max_output_tokens'] },
  { ns: 'codex', name: 'update_plan', kind: 'think', label: 'Update plan', readOnly: true,
    input: null, large: ['plan'], specific: ['explanation'] },
  { ns: 'codex', name: 'view_image', kind: 'read', label: 'View image', readOnly: true,
    input: { path: ['path'] }, large: [], specific: [] },
  { ns: 'codex', name: 'web_search', kind: 'search', label: 'Web search', readOnly: true,
    input: { pattern: ['query'] }, large: [], specific: [] },
  { ns: 'codex', name: 'spawn_agent', kind: 'other', label: 'Spawn agent', readOnly: false,
    input: null, large: ['message'], specific: ['agent_type', 'fork_context'] },
  // Codex's BM25 search over apps' MCP tools (codex-rs core/templates/search_tool): apps tools
  // stay hidden until a search lists them; its result carries a `tools` list.
  { ns: 'codex', name: 'search_tool_bm25', kind: 'search', label: 'Search MCP tools', readOnly: true,
    input: { pattern: ['query'], limit: ['limit'] }, large: [], specific: [], discovery: 'search' },
  { ns: 'codex', name: 'list_mcp_resources', kind: 'read', label: 'List MCP resources', readOnly: true,
    input: null, large: [], specific: ['server', 'cursor'] },
  { ns: 'codex', name: 'read_mcp_resource', kind: 'read', label: 'Read MCP resource', readOnly: true,
    input: null, large: [], specific: ['server', 'uri'] },

  // ---------------------------------------------------------------- opencode (packages/opencode/src/tool/*.ts)
  { ns: 'opencode', name: 'read', kind: 'read', label: 'Read file', readOnly: true,
    input: { path: ['filePath'], offset: ['offset'], limit: ['limit'] }, large: [], specific: [] },
  { ns: 'opencode', name: 'write', kind: 'edit', label: 'Write file', readOnly: false,
    input: { path: ['filePath'] }, large: ['content'], specific: [] },
  { ns: 'opencode', name: 'edit', kind: 'edit', label: 'Edit file', readOnly: false,
    input: { path: ['filePath'] }, large: ['oldString', 'newString'], specific: ['replaceAll'] },
  { ns: 'opencode', name: 'bash', kind: 'execute', label: 'Run command', readOnly: false,
    input: { command: ['command'], description: ['description'], cwd: ['workdir'] }, large: [], specific: ['timeout'] },
  { ns: 'opencode', name: 'glob', kind: 'search', label: 'Find files', readOnly: true,
    input: { pattern: ['pattern'], path: ['path'] }, large: [], specific: [] },
  { ns: 'opencode', name: 'grep', kind: 'search', label: 'Search file contents', readOnly: true,
    input: { pattern: ['pattern'], path: ['path'] }, large: [], specific: ['include'] },
  { ns: 'opencode', name: 'list', kind: 'read', label: 'List directory', readOnly: true,
    input: { directory: ['path'] }, large: [], specific: ['ignore'] },
  { ns: 'opencode', name: 'skill', kind: 'read', label: 'Load skill', readOnly: true,
    input: null, large: [], specific: ['name'] },
  { ns: 'opencode', name: 'todowrite', kind: 'think', label: 'Update todo list', readOnly: true,
    input: null, large: ['todos'], specific: [] },
  { ns: 'opencode', name: 'todoread', kind: 'think', label: 'Read todo list', readOnly: true,
    input: null, large: [], specific: [] },
  { ns: 'opencode', name: 'task', kind: 'other', label: 'Run subagent', readOnly: false,
    input: { description: ['description'] }, large: ['prompt'], specific: ['subagent_type', 'task_id', 'command'] },
  { ns: 'opencode', name: 'webfetch', kind: 'fetch', label: 'Fetch URL', readOnly: true,
    input: null, large: [], specific: ['url', 'format', 'timeout'] },
  { ns: 'opencode', name: 'websearch', kind: 'search', label: 'Web search', readOnly: true,
    input: { pattern: ['query'] }, large: [], specific: [] },
  { ns: 'opencode', name: 'apply_patch', kind: 'edit', label: 'Apply patch', readOnly: false,
    input: null, large: ['patchText'], specific: [] },

  // ---------------------------------------------------------------- memory (capability module)
  // No public source lists this module's tool names; these follow the memory tool commands of
  // the Anthropic memory tool (view, create, str_replace, insert, delete, rename) as separate tools.
  { ns: 'memory', name: 'memory_view', kind: 'read', label: 'View memory', readOnly: true,
    input: { path: ['path'] }, large: [], specific: ['view_range'] },
  { ns: 'memory', name: 'memory_create', kind: 'edit', label: 'Create memory', readOnly: false,
    input: { path: ['path'] }, large: ['file_text'], specific: [] },
  { ns: 'memory', name: 'memory_str_replace', kind: 'edit', label: 'Edit memory', readOnly: false,
    input: { path: ['path'] }, large: ['old_str', 'new_str'], specific: [] },
  { ns: 'memory', name: 'memory_insert', kind: 'edit', label: 'Insert into memory', readOnly: false,
    input: { path: ['path'] }, large: ['insert_text'], specific: ['insert_line'] },
  { ns: 'memory', name: 'memory_delete', kind: 'delete', label: 'Delete memory', readOnly: false,
    input: { path: ['path'] }, large: [], specific: [] },
  { ns: 'memory', name: 'memory_rename', kind: 'move', label: 'Rename memory', readOnly: false,
    input: { path: ['old_path'] }, large: [], specific: ['new_path'] },
  { ns: 'memory', name: 'memory_search', kind: 'search', label: 'Search memories', readOnly: true,
    input: { pattern: ['query'], limit: ['limit'] }, large: [], specific: [] },

  // ---------------------------------------------------------------- lsp (capability module)
  { ns: 'lsp', name: 'lsp_diagnostics', kind: 'read', label: 'Diagnostics', readOnly: true,
    input: { path: ['path', 'file_path'] }, large: [], specific: ['severity'] },
  { ns: 'lsp', name: 'lsp_definition', kind: 'search', label: 'Go to definition', readOnly: true,
    input: { path: ['path', 'file_path'] }, large: [], specific: ['line', 'character'] },
  { ns: 'lsp', name: 'lsp_references', kind: 'search', label: 'Find references', readOnly: true,
    input: { path: ['path', 'file_path'] }, large: [], specific: ['line', 'character', 'include_declaration'] },
  { ns: 'lsp', name: 'lsp_hover', kind: 'read', label: 'Hover', readOnly: true,
    input: { path: ['path', 'file_path'] }, large: [], specific: ['line', 'character'] },
  { ns: 'lsp', name: 'lsp_workspace_symbols', kind: 'search', label: 'Workspace symbols', readOnly: true,
    input: { pattern: ['query'], limit: ['limit'] }, large: [], specific: [] },
  { ns: 'lsp', name: 'lsp_rename', kind: 'edit', label: 'Rename symbol', readOnly: false,
    input: { path: ['path', 'file_path'] }, large: [], specific: ['line', 'character', 'new_name'] },

  // ---------------------------------------------------------------- skills (capability module)
  { ns: 'skills', name: 'list_skills', kind: 'read', label: 'List skills', readOnly: true,
    input: null, large: [], specific: [] },
  { ns: 'skills', name: 'load_skill', kind: 'read', label: 'Load skill', readOnly: true,
    input: null, large: [], specific: ['name'] },
  { ns: 'skills', name: 'read_skill_file', kind: 'read', label: 'Read skill file', readOnly: true,
    input: { path: ['path'] }, large: [], specific: ['name'] },

  // ---------------------------------------------------------------- claude_code (Agent SDK tool input types)
  { ns: 'claude_code', name: 'Read', kind: 'read', label: 'Read file', readOnly: true,
    input: { path: ['file_path'], offset: ['offset'], limit: ['limit'] }, large: [], specific: ['pages'] },
  { ns: 'claude_code', name: 'Write', kind: 'edit', label: 'Write file', readOnly: false,
    input: { path: ['file_path'] }, large: ['content'], specific: [] },
  { ns: 'claude_code', name: 'Edit', kind: 'edit', label: 'Edit file', readOnly: false,
    input: { path: ['file_path'] }, large: ['old_string', 'new_string'], specific: ['replace_all'] },
  { ns: 'claude_code', name: 'MultiEdit', kind: 'edit', label: 'Edit file (several edits)', readOnly: false,
    input: { path: ['file_path'] }, large: ['edits'], specific: [] },
  { ns: 'claude_code', name: 'Bash', kind: 'execute', label: 'Run command', readOnly: false,
    input: { command: ['command'], description: ['description'] }, large: [], specific: ['timeout', 'run_in_background', 'dangerouslyDisableSandbox'] },
  { ns: 'claude_code', name: 'BashOutput', kind: 'read', label: 'Read background output', readOnly: true,
    input: null, large: [], specific: ['bash_id', 'filter'] },
  { ns: 'claude_code', name: 'KillShell', kind: 'execute', label: 'Stop background command', readOnly: false,
    input: null, large: [], specific: ['shell_id'] },
  { ns: 'claude_code', name: 'Grep', kind: 'search', label: 'Search file contents', readOnly: true,
    input: { pattern: ['pattern'], path: ['path'], offset: ['offset'], limit: ['head_limit'] }, large: [],
    specific: ['glob', 'type', 'output_mode', '-i', '-o', '-n', '-A', '-B', '-C', 'context', 'multiline'] },
  { ns: 'claude_code', name: 'Glob', kind: 'search', label: 'Find files', readOnly: true,
    input: { pattern: ['pattern'], path: ['path'] }, large: [], specific: [] },
  { ns: 'claude_code', name: 'LS', kind: 'read', label: 'List directory', readOnly: true,
    input: { directory: ['path'] }, large: [], specific: ['ignore'] },
  { ns: 'claude_code', name: 'WebFetch', kind: 'fetch', label: 'Fetch URL', readOnly: true,
    input: null, large: ['prompt'], specific: ['url'] },
  { ns: 'claude_code', name: 'WebSearch', kind: 'search', label: 'Web search', readOnly: true,
    input: { pattern: ['query'] }, large: [], specific: ['allowed_domains', 'blocked_domains'] },
  { ns: 'claude_code', name: 'Task', kind: 'other', label: 'Run subagent', readOnly: false,
    input: { description: ['description'] }, large: ['prompt'], specific: ['subagent_type', 'model', 'run_in_background', 'name', 'isolation'] },
  { ns: 'claude_code', name: 'Agent', kind: 'other', label: 'Run subagent', readOnly: false,
    input: { description: ['description'] }, large: ['prompt'], specific: ['subagent_type', 'model', 'run_in_background', 'name', 'isolation'] },
  { ns: 'claude_code', name: 'TaskOutput', kind: 'read', label: 'Read task output', readOnly: true,
    input: null, large: [], specific: ['task_id', 'block', 'timeout'] },
  { ns: 'claude_code', name: 'TaskStop', kind: 'execute', label: 'Stop task', readOnly: false,
    input: null, large: [], specific: ['task_id', 'shell_id'] },
  { ns: 'claude_code', name: 'TodoWrite', kind: 'think', label: 'Update todo list', readOnly: true,
    input: null, large: ['todos'], specific: [] },
  { ns: 'claude_code', name: 'NotebookEdit', kind: 'edit', label: 'Edit notebook', readOnly: false,
    input: { path: ['notebook_path'] }, large: ['new_source'], specific: ['cell_id', 'cell_type', 'edit_mode'] },
  { ns: 'claude_code', name: 'Skill', kind: 'read', label: 'Load skill', readOnly: true,
    input: null, large: [], specific: ['skill', 'args'] },
  { ns: 'claude_code', name: 'AskUserQuestion', kind: 'other', label: 'Ask the user', readOnly: true,
    input: null, large: ['questions'], specific: [] },
  { ns: 'claude_code', name: 'ExitPlanMode', kind: 'switch_mode', label: 'Exit plan mode', readOnly: true,
    input: null, large: ['plan'], specific: ['allowedPrompts'] },
  { ns: 'claude_code', name: 'EnterPlanMode', kind: 'switch_mode', label: 'Enter plan mode', readOnly: true,
    input: null, large: [], specific: [] },
  // Claude Code defers MCP tool schemas behind ToolSearch; its result names tools as
  // tool_reference blocks (research notes, users-and-standards).
  { ns: 'claude_code', name: 'ToolSearch', kind: 'search', label: 'Search MCP tools', readOnly: true,
    input: { pattern: ['query'], limit: ['max_results'] }, large: [], specific: [], discovery: 'search' },
  { ns: 'claude_code', name: 'ListMcpResourcesTool', kind: 'read', label: 'List MCP resources', readOnly: true,
    input: null, large: [], specific: ['server'] },
  { ns: 'claude_code', name: 'ReadMcpResourceTool', kind: 'read', label: 'Read MCP resource', readOnly: true,
    input: null, large: [], specific: ['server', 'uri'] },

  // ---------------------------------------------------------------- gemini_cli (google-gemini/gemini-cli tools/definitions)
  // Parameter names from base-declarations.ts and the default-legacy tool set; the older names
  // (absolute_path, path, directory, search_file_content) are those of builds before mid-2025.
  { ns: 'gemini_cli', name: 'read_file', kind: 'read', label: 'Read file', readOnly: true,
    input: { path: ['file_path', 'absolute_path'], offset: ['start_line', 'offset'], limit: ['limit'] }, large: [], specific: ['end_line'],
    note: 'start_line is 1-based; the older offset was a 0-based line; end_line is a line, not a count' },
  { ns: 'gemini_cli', name: 'write_file', kind: 'edit', label: 'Write file', readOnly: false,
    input: { path: ['file_path'] }, large: ['content'], specific: [] },
  { ns: 'gemini_cli', name: 'replace', kind: 'edit', label: 'Edit file', readOnly: false,
    input: { path: ['file_path'] }, large: ['old_string', 'new_string'], specific: ['instruction', 'allow_multiple', 'expected_replacements'] },
  { ns: 'gemini_cli', name: 'run_shell_command', kind: 'execute', label: 'Run command', readOnly: false,
    input: { command: ['command'], description: ['description'], cwd: ['dir_path', 'directory'] }, large: [], specific: ['is_background', 'additional_permissions'] },
  { ns: 'gemini_cli', name: 'glob', kind: 'search', label: 'Find files', readOnly: true,
    input: { pattern: ['pattern'], path: ['dir_path', 'path'] }, large: [], specific: ['case_sensitive', 'respect_git_ignore', 'respect_gemini_ignore'] },
  { ns: 'gemini_cli', name: 'grep_search', kind: 'search', label: 'Search file contents', readOnly: true,
    input: { pattern: ['pattern'], path: ['dir_path', 'path'], limit: ['total_max_matches'] }, large: [],
    specific: ['include_pattern', 'exclude_pattern', 'names_only', 'max_matches_per_file', 'case_sensitive', 'fixed_strings', 'context', 'after', 'before', 'no_ignore'] },
  { ns: 'gemini_cli', name: 'search_file_content', kind: 'search', label: 'Search file contents', readOnly: true,
    input: { pattern: ['pattern'], path: ['path', 'dir_path'] }, large: [], specific: ['include'], note: 'the name of grep_search before it was renamed' },
  { ns: 'gemini_cli', name: 'list_directory', kind: 'read', label: 'List directory', readOnly: true,
    input: { directory: ['dir_path', 'path'] }, large: [], specific: ['ignore', 'file_filtering_options'] },
  { ns: 'gemini_cli', name: 'read_many_files', kind: 'read', label: 'Read files', readOnly: true,
    input: null, large: [], specific: ['include', 'exclude', 'recursive', 'useDefaultExcludes', 'paths', 'file_filtering_options'] },
  { ns: 'gemini_cli', name: 'google_web_search', kind: 'search', label: 'Web search', readOnly: true,
    input: { pattern: ['query'] }, large: [], specific: [] },
  { ns: 'gemini_cli', name: 'web_fetch', kind: 'fetch', label: 'Fetch URL', readOnly: true,
    input: null, large: ['prompt'], specific: [], note: 'the URLs are inside the prompt text' },
  { ns: 'gemini_cli', name: 'save_memory', kind: 'edit', label: 'Save memory', readOnly: false,
    input: null, large: ['fact'], specific: ['scope'], note: 'appends to a GEMINI.md memory file' },
  { ns: 'gemini_cli', name: 'write_todos', kind: 'think', label: 'Update todo list', readOnly: true,
    input: null, large: ['todos'], specific: [] },
  { ns: 'gemini_cli', name: 'activate_skill', kind: 'read', label: 'Load skill', readOnly: true,
    input: null, large: [], specific: ['name'] },
  { ns: 'gemini_cli', name: 'get_internal_docs', kind: 'read', label: 'Read Gemini CLI docs', readOnly: true,
    input: { path: ['path'] }, large: [], specific: [] },
  { ns: 'gemini_cli', name: 'ask_user', kind: 'other', label: 'Ask the user', readOnly: true,
    input: null, large: ['questions'], specific: [] },
  { ns: 'gemini_cli', name: 'enter_plan_mode', kind: 'switch_mode', label: 'Enter plan mode', readOnly: true,
    input: null, large: [], specific: ['reason'] },
  { ns: 'gemini_cli', name: 'exit_plan_mode', kind: 'switch_mode', label: 'Exit plan mode', readOnly: true,
    input: null, large: [], specific: ['plan_filename'] },

  // ---------------------------------------------------------------- MCP meta-tools (any harness)
  // MCP tools are reachable through these two stable entry points (SPEC §1). A use_tool call is
  // attributed to the tool it names; its projection comes from tool_input.
  { ns: 'mcp', name: 'search_tool', kind: 'search', label: 'Search MCP tools', readOnly: true,
    input: { pattern: ['query'], limit: ['limit'] }, large: [], specific: [], discovery: 'search' },
  { ns: 'mcp', name: 'use_tool', kind: 'other', label: 'Call MCP tool', readOnly: false,
    input: null, large: ['tool_input'], specific: ['tool_name'] },
] as const;

// Projection of MCP tools (no declaration rows: they attach at run time, their input is open).
// A member of tool_input is projected when it is named like a canonical field or like one of
// these common spellings of it; everything else stays in raw_input only.
export const MCP_INPUT_NAMES = {
  path: ['path', 'file_path', 'filePath', 'relative_path'],
  offset: ['offset'],
  limit: ['limit'],
  command: ['command'],
  description: ['description'],
  cwd: ['cwd', 'workdir'],
  directory: ['directory', 'dir_path'],
  pattern: ['pattern'],
} as const;
