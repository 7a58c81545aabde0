// A progress bar on stderr, drawn only on a TTY and only for inputs worth waiting for.

/** Inputs smaller than this finish before a bar would be useful. */
export const PROGRESS_MIN_BYTES = 4 * 1024 * 1024;
const REDRAW_INTERVAL_MS = 200;

export interface ProgressBar {
  readonly update: (bytesRead: number, totalBytes: number, label?: string) => void;
  readonly done: () => void;
}

export function createProgressBar(enabled: boolean, totalBytes: number): ProgressBar {
  if (!enabled) return { update: () => {}, done: () => {} };
  const started = performance.now();
  let lastDraw = 0;
  let drawn = false;
  let last: [number, number, string] = [0, totalBytes, ''];
  const draw = (bytesRead: number, total: number, label = ''): void => {
    // Small inputs finish before a bar would help.
    if (total < PROGRESS_MIN_BYTES) return;
    const ratio = total > 0 ? Math.min(1, bytesRead / total) : 0;
    const width = 30;
    const filled = Math.round(ratio * width);
    const seconds = (performance.now() - started) / 1000;
    const mbps = seconds > 0 ? bytesRead / 1e6 / seconds : 0;
    process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(1)}%  ${(bytesRead / 1e6).toFixed(1)}/${(total / 1e6).toFixed(1)} MB  ${mbps.toFixed(1)} MB/s${label ? `  ${label}` : ''}`);
    drawn = true;
  };
  return {
    update: (bytesRead, total, label = '') => {
      last = [bytesRead, total, label];
      const now = performance.now();
      if (now - lastDraw < REDRAW_INTERVAL_MS) return;
      lastDraw = now;
      draw(bytesRead, total, label);
    },
    done: () => {
      if (!drawn) return;
      draw(...last); // the final state, so a finished bar never shows a stale percentage
      process.stderr.write('\n');
    },
  };
}
