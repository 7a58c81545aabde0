// Flags that shape the analytics tables, shared by every command that opens the sink.
import { UsageError } from './io.ts';

/** --retention-days N (or $TOOLCANON_RETENTION_DAYS): a non-negative integer, 0 removes the retention. */
export function retentionDays(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const value = flag ?? env['TOOLCANON_RETENTION_DAYS'];
  if (value === undefined || value === '') return undefined;
  if (!/^[0-9]+$/.test(value) || Number(value) > 36_500) throw new UsageError(`--retention-days must be a whole number of days from 0 to 36500, got ${JSON.stringify(value)}`);
  return Number(value);
}
