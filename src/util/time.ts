// ClickHouse DateTime64(3) text in UTC (`2026-12-02 10:00:00.123`) to and from epoch milliseconds.

/** ClickHouse DateTime64(3) text in UTC of milliseconds since the epoch. */
export function msToClickHouseTime(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-12-02T10:00:00.123Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
}

/** Milliseconds since the epoch of a ClickHouse DateTime64(3) text in UTC. */
export function clickHouseTimeToMs(ts: string): number {
  return Date.parse(`${ts.replace(' ', 'T')}Z`);
}

/** ClickHouse DateTime64(3) text in UTC, from an RFC 3339 timestamp; undefined when invalid. */
export function toClickHouseTime(ts: string): string | undefined {
  // Fast path: already UTC with milliseconds (the common case), valid calendar date.
  if (ts.length === 24 && ts.charCodeAt(23) === 90 /* Z */ && FAST_UTC.test(ts) && isCalendarValid(ts)) {
    return `${ts.slice(0, 10)} ${ts.slice(11, 23)}`;
  }
  const ms = Date.parse(ts);
  if (Number.isNaN(ms)) return undefined;
  if (!isCalendarValid(ts)) return undefined;
  return msToClickHouseTime(ms);
}

const FAST_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Two ASCII digits at `at` as a number, or -1. */
function twoDigits(ts: string, at: number): number {
  const a = ts.charCodeAt(at) - 48;
  const b = ts.charCodeAt(at + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** Date.parse rolls 2026-02-30 over into March: check the calendar date and time as written. */
function isCalendarValid(ts: string): boolean {
  const year = twoDigits(ts, 0) * 100 + twoDigits(ts, 2);
  const month = twoDigits(ts, 5);
  const day = twoDigits(ts, 8);
  if (year < 0 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  const h = twoDigits(ts, 11);
  const mi = twoDigits(ts, 14);
  const s = twoDigits(ts, 17);
  return day <= days && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && s >= 0 && s <= 59;
}
