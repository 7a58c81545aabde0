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
