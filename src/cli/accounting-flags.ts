// The accounting flags shared by replay, import and consume, validated in one place.
import { ModelTable } from '../accounting/models.ts';
import type { AccountingConfig } from '../accounting/session.ts';
import { UsageError } from './io.ts';

export interface AccountingFlags {
  readonly 'threshold-pct'?: string | undefined;
  readonly 'headroom-tokens'?: string | undefined;
  readonly models?: string | undefined;
}

export function accountingConfig(values: AccountingFlags): AccountingConfig {
  const pct = values['threshold-pct'] ?? '85';
  if (!/^[0-9]+$/.test(pct) || Number(pct) > 100) throw new UsageError(`--threshold-pct must be an integer from 0 to 100, got ${JSON.stringify(pct)}`);
  const headroom = values['headroom-tokens'] ?? '0';
  if (!/^[0-9]+$/.test(headroom)) throw new UsageError(`--headroom-tokens must be a non-negative integer, got ${JSON.stringify(headroom)}`);
  return { thresholdPct: Number(pct), headroomTokens: BigInt(headroom), models: ModelTable.withOverrides(values.models) };
}
