// Cline's own reading of the shared task format (../cline/parser.ts): its harness value, how
// its tokensIn relates to the cache figures, and the tool names of its XML tool use.
import type { ClineFamily } from './types.ts';

/** ClineDefaultTool (cline/cline apps/vscode/src/shared/tools.ts @ 864419d8). */
export const CLINE_TOOLS: ReadonlySet<string> = new Set([
  'ask_followup_question', 'attempt_completion', 'execute_command', 'replace_in_file', 'read_file', 'write_to_file',
  'search_files', 'list_files', 'list_code_definition_names', 'browser_action', 'use_mcp_tool', 'access_mcp_resource',
  'load_mcp_documentation', 'new_task', 'plan_mode_respond', 'act_mode_respond', 'focus_chain', 'web_fetch', 'web_search',
  'condense', 'summarize_task', 'report_bug', 'new_rule', 'apply_patch', 'generate_explanation', 'use_skill', 'use_subagents',
]);

export const CLINE_FAMILY: ClineFamily = { harness: 'cline', tokensIn: 'exclusive', xmlTools: CLINE_TOOLS };
