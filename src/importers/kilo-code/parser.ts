// Kilo Code's task files are read by Cline's parser (../cline/parser.ts) with Kilo Code's family:
// harness kilo_code, tokensIn judged per record as Roo Code's (Kilo Code merges Roo Code), its tool names.
import type { ClineFamily } from '../cline/types.ts';
import { parseTaskFile, type TaskContext } from '../cline/parser.ts';
import type { ParsedFile } from '../types.ts';
import { KILO_TOOLS } from './types.ts';

export const KILO_FAMILY: ClineFamily = { harness: 'kilo_code', tokensIn: 'judged', xmlTools: KILO_TOOLS };

export function parseKiloFile(path: string, data: Buffer, task: TaskContext = {}): ParsedFile {
  return parseTaskFile(path, data, KILO_FAMILY, task);
}
