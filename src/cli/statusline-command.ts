// `toolcanon statusline`: Claude Code's status line command (src/statusline/statusline.ts). It
// runs on every prompt, so bin/toolcanon.mjs starts it without main.ts (whose imports cost ~100 ms)
// and this module imports nothing that loads the engine, the client or the schemas.
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { PriceTable } from '../cost/prices.ts';
import { parseStatuslineInput, renderStatus, statuslineDir, statusOf, StatuslineInputError } from '../statusline/statusline.ts';
import { accountingConfig } from './accounting-flags.ts';
import { UsageError, type Io } from './io.ts';
import { parseArgsUsageError } from './suggest.ts';

export const STATUSLINE_HELP = `Usage: toolcanon statusline [--format table|json] [options]  < Claude Code's status JSON

Claude Code's status line: reads the JSON Claude Code passes on stdin (session_id,
transcript_path, model, …) and prints one line: the model, the context after the last response
against the model's window, its share and the threshold (SPEC §5: reached when
used × 100 >= window × pct − headroom × 100), the session's cost (its subagents included) and
today's (UTC) cost over the sessions that showed this line today. It reads the transcript's new
lines itself (a cache per transcript in $TOOLCANON_STATUSLINE_DIR, default ~/.toolcanon/statusline)
and no database: no watch needs to run. In ~/.claude/settings.json:

  "statusLine": { "type": "command", "command": "toolcanon statusline" }

Options:
  --format table|json        One line (default), or one JSON object with every figure
  --threshold-pct N          Context threshold, percent (default 85)
  --headroom-tokens N        Moves the threshold earlier by N tokens (default 0)
  --models FILE              JSON { "model": contextWindowTokens } laid over the shipped table
  --prices FILE              JSON prices laid over the shipped price table (as report usage)

Example:
  echo '{"session_id":"s","transcript_path":"/path/s.jsonl","model":{"id":"claude-sonnet-4-5"}}' | toolcanon statusline`;

const OPTIONS = {
  format: { type: 'string', default: 'table' },
  'threshold-pct': { type: 'string' },
  'headroom-tokens': { type: 'string' },
  models: { type: 'string' },
  prices: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

export async function runStatuslineCommand(argv: readonly string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw parseArgsUsageError(error, OPTIONS);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(STATUSLINE_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`statusline takes no argument (it reads Claude Code's JSON on stdin), got ${JSON.stringify(positionals[0])}`);
  if (values.format !== 'table' && values.format !== 'json') throw new UsageError(`statusline --format must be table or json, got ${JSON.stringify(values.format)}`);
  let accounting;
  let prices;
  try {
    accounting = accountingConfig(values);
    prices = PriceTable.withOverrides(values.prices);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
  // bin/toolcanon.mjs may hand stdin over on another descriptor (TOOLCANON_STDIN_FD).
  const fd = Number(process.env['TOOLCANON_STDIN_FD'] ?? 0);
  let text: string;
  try {
    text = readFileSync(fd, 'utf8');
  } catch (error) {
    io.err(`toolcanon: statusline could not read stdin (${(error as Error).message}); it reads the JSON Claude Code passes there`);
    return 2;
  }
  let status;
  try {
    const input = parseStatuslineInput(text);
    status = statusOf(input, { thresholdPct: accounting.thresholdPct, headroomTokens: accounting.headroomTokens, models: accounting.models, prices, dir: statuslineDir(), today: new Date().toISOString().slice(0, 10) });
  } catch (error) {
    if (error instanceof StatuslineInputError) {
      io.err(`toolcanon: ${error.message}`);
      return 2;
    }
    throw error;
  }
  io.out(values.format === 'json' ? JSON.stringify(status) : renderStatus(status));
  return Promise.resolve(0);
}

/** The entry bin/toolcanon.mjs runs for `statusline` (without main.ts): errors as one line, never a stack. */
export async function run(argv: readonly string[]): Promise<void> {
  const io: Io = { out: (t) => process.stdout.write(`${t}\n`), err: (t) => process.stderr.write(`${t}\n`), isTty: false };
  try {
    process.exitCode = await runStatuslineCommand(argv.slice(argv[0] === 'statusline' ? 1 : 0), io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`toolcanon: ${error.message}\nRun 'toolcanon statusline --help' for usage.`);
      process.exitCode = 2;
    } else {
      io.err(`toolcanon: statusline: ${String((error as Error).message ?? error).split('\n')[0]}`);
      process.exitCode = 1;
    }
  }
}
