// A real Chromium for the browser tests: $CHROMIUM_PATH, else Debian's `chromium` (or another
// Chromium / Chrome) on PATH. Without one the tests skip loudly; under CI=true that is a failure
// (.ci/run installs Debian's chromium where it is missing).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];

function onPath(command: string): string | undefined {
  try {
    const path = execFileSync('bash', ['-c', 'command -v "$1"', 'bash', command], { encoding: 'utf8' }).trim();
    return path === '' ? undefined : path;
  } catch {
    return undefined;
  }
}

/** The browser's executable, or null after a loud warning (an error under CI=true). */
export function chromiumOrSkip(suite: string): string | null {
  const fromEnv = process.env['CHROMIUM_PATH'];
  if (fromEnv !== undefined && fromEnv !== '' && existsSync(fromEnv)) return fromEnv;
  for (const c of CANDIDATES) {
    const path = onPath(c);
    if (path !== undefined) return path;
  }
  const why = `no Chromium found ($CHROMIUM_PATH, or ${CANDIDATES.join(' / ')} on PATH)`;
  if (process.env['CI'] === 'true') throw new Error(`${suite} cannot run under CI=true: ${why}`);
  const bar = '!'.repeat(78);
  console.warn(`\n${bar}\n!! SKIPPING ${suite}: ${why}.\n!! Install Debian's chromium (apt-get install -y chromium), or point $CHROMIUM_PATH at a Chromium.\n${bar}\n`);
  return null;
}
