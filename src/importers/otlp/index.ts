// The OTLP importer: OTLP/JSON trace and log exports (GenAI spans, Claude Code log events).
import { HARNESSES } from '../../canonical/meta.ts';
import { parseLinesWith } from '../stream.ts';
import { MAX_DOCUMENT_BYTES, type Importer } from '../types.ts';
import { parseOtlpFile } from './parser.ts';
import { defaultOtlpPaths, listOtlpFiles } from './paths.ts';
import { otlpLinesReading } from './stream.ts';

/** A `.jsonl` file is one export per line, streamed; any other may be one pretty-printed export, read whole. */
function isLineFile(path: string): boolean {
  return path.endsWith('.jsonl');
}

export const otlpImporter: Importer = {
  id: 'otlp',
  // The harness is read from the data (any value it maps to).
  harnesses: HARNESSES,
  samples: { fixtures: ['test/importers/fixtures-otlp', 'test/importers/fixtures-otlp-join'], corpus: ['samples/otel_genai', 'samples/claude_code_otel'] },
  description: 'OTLP/JSON traces and logs: GenAI execute_tool and inference spans; Claude Code tool_result, rejected tool_decision, api_request and mcp_server_connection events',
  defaultPaths: () => defaultOtlpPaths(),
  listFiles: (paths) => listOtlpFiles(paths),
  parseFile: (path, data) => (isLineFile(path) ? parseLinesWith(otlpLinesReading(path), data) : parseOtlpFile(path, data)),
  readingOf: (path) => (isLineFile(path) ? { kind: 'lines', reading: otlpLinesReading(path) } : { kind: 'document', maxBytes: MAX_DOCUMENT_BYTES }),
};
