// Roo Code's task files are read by Cline's parser (../cline/parser.ts) with Roo Code's family:
// harness roo_code, tokensIn judged per record (see ClineFamily), Roo Code's tool names.
import type { ClineFamily } from '../cline/types.ts';
import { parseTaskFile, type TaskContext } from '../cline/parser.ts';
import type { ParsedFile } from '../types.ts';
import { ROO_TOOLS } from './types.ts';

export const ROO_FAMILY: ClineFamily = { harness: 'roo_code', tokensIn: 'judged', xmlTools: ROO_TOOLS };

export function parseRooFile(path: string, data: Buffer, task: TaskContext = {}): ParsedFile {
  return parseTaskFile(path, data, ROO_FAMILY, task);
}
