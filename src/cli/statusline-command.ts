// `toolcanon statusline`: Claude Code's status line command (src/statusline/statusline.ts). It
// runs on every prompt, so bin/toolcanon.mjs starts it without main.ts (whose imports cost ~100 ms)
// and this module imports nothing that loads the engine, the client or the schemas.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { PriceTable } from '../cost/prices.ts';
import { findOwner } from '../serve/find.ts';
import { parseStatuslineInput, renderStatus, statuslineDir, statusOf, StatuslineInputError } from '../statusline/statusline.ts';
import { accountingConfig } from './accounting-flags.ts';
import { UsageError, type Io } from './io.ts';
import { parseArgsUsageError } from './suggest.ts';

export const STATUSLINE_HELP = `Usage: toolcanon statusline [--format table|json] [options]  < Claude Code's status JSON

Claude Code's status line: reads the JSON Claude Code passes on stdin (session_id,
transcript_path, model, …) and prints one line: the model, the context after the last response
against the model's window, its share and the threshold (SPEC §5: reached when
used × 100 >= window × pct − headroom × 100), the session's cost (its subagents included) and
today's (UTC) cost. It reads the transcript's new lines itself (a cache per transcript in
$TOOLCANON_STATUSLINE_DIR, default ~/.toolcanon/statusline) and loads no database engine: no watch
needs to run. Today's cost is every request of the day in the database when a watch or serve owns
--db DIR (read through it, as report usage --by day prices it); otherwise, or when that owner does
not answer within a second, the sessions that showed this line today. In ~/.claude/settings.json:

  "statusLine": { "type": "command", "command": "toolcanon statusline" }

Options:
  --format table|json        One line (default), or one JSON object with every figure
  --db DIR                   The data directory a running watch or serve owns (default
                             .toolcanon/db, or $TOOLCANON_DB): today's cost is read through it
  --threshold-pct N          Context threshold, percent (default 85)
  --headroom-tokens N        Moves the threshold earlier by N tokens (default 0)
  --models FILE              JSON { "model": contextWindowTokens } laid over the shipped table
  --prices FILE              JSON prices laid over the shipped price table (as report usage)

Example:
  echo '{"session_id":"s","transcript_path":"/path/s.jsonl","model":{"id":"claude-sonnet-4-5"}}' | toolcanon statusline`;

const OPTIONS = {
  format: { type: 'string', default: 'table' },
  db: { type: 'string' },
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
    const today = new Date().toISOString().slice(0, 10);
    const todayFromDatabase = await todayThroughAnOwner(values.db, today, prices);
    status = statusOf(input, { thresholdPct: accounting.thresholdPct, headroomTokens: accounting.headroomTokens, models: accounting.models, prices, dir: statuslineDir(), today, todayFromDatabase });
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

/** The longest the status line waits for an owner's answer before it falls back to its caches. */
const OWNER_TIMEOUT_MS = 1_000;

/**
 * Today's cost through the live owner of the data directory (--db, $TOOLCANON_DB, or the default
 * .toolcanon/db), or undefined: no owner (one stat of its owner file), its token unreadable, or no
 * answer in time. The query code is loaded only when an owner is live.
 */
async function todayThroughAnOwner(db: string | undefined, day: string, prices: PriceTable): Promise<{ picoDollars: bigint; unpriced: number } | undefined> {
  try {
    const owner = findOwner(resolve(db ?? process.env['TOOLCANON_DB'] ?? '.toolcanon/db'));
    if (owner === undefined) return undefined;
    const { todayThroughOwner } = await import('../statusline/today.ts');
    return await todayThroughOwner(owner, day, prices, OWNER_TIMEOUT_MS);
  } catch {
    return undefined;
  }
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
