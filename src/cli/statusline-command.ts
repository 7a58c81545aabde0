// `toolcanon statusline`: Claude Code's status line (being written).
import type { Io } from './io.ts';

export async function runStatuslineCommand(_argv: readonly string[], io: Io): Promise<number> {
  io.err('toolcanon: statusline is not built yet');
  return Promise.resolve(1);
}

export async function run(argv: readonly string[]): Promise<void> {
  process.exitCode = await runStatuslineCommand(argv, { out: (t) => process.stdout.write(`${t}\n`), err: (t) => process.stderr.write(`${t}\n`), isTty: false });
}
