// Kilo Code 4.x/5.x (the VS Code extension forked from Roo Code) writes Roo Code's task format:
// the records are read by ../cline/types.ts. What is Kilo Code's own is its tool names.
import { ROO_TOOLS } from '../roo-code/types.ts';

/** Roo Code's tools and Kilo Code's additions (`kilocode_change` in Kilo-Org/kilocode packages/types/src/tool.ts @ 0fc86cec: fast_edit_file, new_rule, report_bug, condense, delete_file). */
export const KILO_TOOLS: ReadonlySet<string> = new Set([...ROO_TOOLS, 'fast_edit_file', 'new_rule', 'report_bug', 'condense', 'delete_file']);
