// The OTLP importer: OTLP/JSON trace and log exports (GenAI spans, Claude Code log events).
import { MAX_DOCUMENT_BYTES, type Importer } from '../types.ts';
import { parseOtlpFile } from './parser.ts';
import { defaultOtlpPaths, listOtlpFiles } from './paths.ts';

export const otlpImporter: Importer = {
  id: 'otlp',
  description: 'OTLP/JSON traces and logs: GenAI execute_tool and inference spans; Claude Code tool_result, rejected tool_decision, api_request and mcp_server_connection events',
  defaultPaths: () => defaultOtlpPaths(),
  listFiles: (paths) => listOtlpFiles(paths),
  parseFile: (path, data) => parseOtlpFile(path, data),
  // A file not named `.jsonl` may be one pretty-printed export: read whole up to its limit.
  // A `.jsonl` export is not streamed yet.
  readingOf: (path) => (path.endsWith('.jsonl') ? { kind: 'document' } : { kind: 'document', maxBytes: MAX_DOCUMENT_BYTES }),
};
