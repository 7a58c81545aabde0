// The OTLP importer: OTLP/JSON trace and log exports (GenAI spans, Claude Code log events).
import type { Importer } from '../types.ts';
import { parseOtlpFile } from './parser.ts';
import { defaultOtlpPaths, listOtlpFiles } from './paths.ts';

export const otlpImporter: Importer = {
  id: 'otlp',
  description: 'OTLP/JSON traces and logs: GenAI execute_tool and inference spans, Claude Code tool_result and api_request events',
  defaultPaths: () => defaultOtlpPaths(),
  listFiles: (paths) => listOtlpFiles(paths),
  parseFile: (path, data) => parseOtlpFile(path, data),
};
