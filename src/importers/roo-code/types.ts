// Roo Code writes Cline's task format (it is a fork of Cline): the records are read by
// ../cline/types.ts. What is Roo Code's own: its tool names, and the subtask link it keeps in
// each task folder's history_item.json.
import { idMember, isObject } from '../json.ts';

/** `toolNames` (RooCodeInc/Roo-Code packages/types/src/tool.ts @ cb836567), plus list_code_definition_names, insert_content, browser_action and fetch_instructions of earlier builds. */
export const ROO_TOOLS: ReadonlySet<string> = new Set([
  'execute_command', 'read_file', 'read_command_output', 'write_to_file', 'apply_diff', 'edit', 'search_and_replace', 'search_replace',
  'edit_file', 'apply_patch', 'search_files', 'list_files', 'use_mcp_tool', 'access_mcp_resource', 'ask_followup_question',
  'attempt_completion', 'switch_mode', 'new_task', 'codebase_search', 'update_todo_list', 'run_slash_command', 'skill',
  'generate_image', 'list_code_definition_names', 'insert_content', 'browser_action', 'fetch_instructions',
]);

/** The task's root task (`rootTaskId`, else `parentTaskId`) from a history_item.json's text; undefined for a task of its own. */
export function rootTaskOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let item: unknown;
  try {
    item = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(item)) return undefined;
  return idMember(item, 'rootTaskId') ?? idMember(item, 'parentTaskId');
}
