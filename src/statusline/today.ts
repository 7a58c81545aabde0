// Today's cost through the running owner of a data directory (src/serve/owner.ts: `watch`,
// `serve`), for the status line: every observed request of the day (UTC) in the database, every
// harness, priced as `report usage --by day` prices them (src/report/usage.ts, billableTokensSql
// and groupCosts: the same billable kinds, the same price bands). Plain HTTP to the owner's proxy
// with its token: no engine, no client library, no schema; one small query. Where report usage
// first asks which models the day has to learn their prompt limits, this asks for each request
// whether its prompt is above each limit the price table knows (a handful of values), and picks
// the model's own afterwards: the same sums, one round trip less.
import { request } from 'node:http';
import { USAGE_CONVENTIONS } from '../accounting/conventions.ts';
import type { Harness } from '../canonical/meta.ts';
import { costPicoDollars, type PriceTable } from '../cost/prices.ts';
import type { FoundOwner } from '../serve/find.ts';

const harnessesWhere = (pick: (h: Harness) => boolean): string =>
  (Object.keys(USAGE_CONVENTIONS) as Harness[]).filter(pick).map((h) => `'${h}'`).join(', ');

/** The observed requests of one day ({day:String}, YYYY-MM-DD), as report usage --by day keys them. */
const OF_THE_DAY = `FROM token_usage FINAL WHERE source = 'observed' AND toString(toDate(ts)) = {day:String}`;

/** Billable tokens per model and price band of one day: report usage's billableTokensSql for one day's row. */
const DAY_BILLABLE_SQL = `SELECT toString(model) AS cost_model,
    arrayMap(l -> prompt_tokens > l, {limits:Array(UInt64)}) AS above,
    toString(count()) AS requests,
    toString(sum(toUInt128(fresh_input))) AS input,
    toString(sum(toUInt128(cr))) AS cache_read,
    toString(sum(toUInt128(cw))) AS cache_write,
    toString(sum(toUInt128(plain_output))) AS output,
    toString(sum(toUInt128(rs))) AS reasoning
  FROM (
    SELECT *,
      ifNull(input_tokens, 0) AS inp, ifNull(cache_read_tokens, 0) AS cr, ifNull(cache_write_tokens, 0) AS cw,
      ifNull(output_tokens, 0) AS out, ifNull(reasoning_tokens, 0) AS rs,
      harness IN (${harnessesWhere((h) => USAGE_CONVENTIONS[h].inputIncludesCache)}) AS input_includes_cache,
      if(input_includes_cache, if(inp > cr + cw, inp - cr - cw, 0), inp) AS fresh_input,
      if(input_includes_cache, inp, inp + cr + cw) AS prompt_tokens,
      if(harness IN (${harnessesWhere((h) => USAGE_CONVENTIONS[h].outputIncludesReasoning)}), if(out > rs, out - rs, 0), out) AS plain_output
    ${OF_THE_DAY}
  )
  GROUP BY cost_model, above`;

/** One query through the owner's proxy: rows of JSONEachRow (64-bit integers as strings). */
function query<T>(owner: FoundOwner, sql: string, params: Record<string, string>, signal: AbortSignal): Promise<T[]> {
  const url = new URL(owner.url);
  url.searchParams.set('default_format', 'JSONEachRow');
  url.searchParams.set('output_format_json_quote_64bit_integers', '1');
  const database = process.env['TOOLCANON_CLICKHOUSE_DATABASE'];
  if (database) url.searchParams.set('database', database);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(`param_${k}`, v);
  return new Promise((resolveRows, reject) => {
    const req = request(url, { method: 'POST', headers: { 'X-ClickHouse-Key': owner.token, 'content-type': 'text/plain; charset=utf-8' }, signal }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`the owner answered ${res.statusCode}: ${body.split('\n')[0]}`));
        try {
          resolveRows(body.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as T));
        } catch (error) {
          reject(error as Error);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(sql);
  });
}

/**
 * The day's cost over the owner's database: exact pico-dollars of the priced requests, and how
 * many requests have no price (unknown model, or above the priced prompt size). Rejects when the
 * owner does not answer within `timeoutMs` or answers with an error (the caller falls back).
 */
export async function todayThroughOwner(owner: FoundOwner, day: string, prices: PriceTable, timeoutMs: number): Promise<{ picoDollars: bigint; unpriced: number }> {
  // Every prompt limit of the price table (a model's own is one of them).
  const limits = prices.promptLimits();
  const rows = await query<{ cost_model: string; above: (number | boolean | string)[]; requests: string; input: string; cache_read: string; cache_write: string; output: string; reasoning: string }>(
    owner,
    DAY_BILLABLE_SQL,
    { day, limits: `[${limits.map((l) => l.toString()).join(',')}]` },
    AbortSignal.timeout(timeoutMs),
  );
  let picoDollars = 0n;
  let unpriced = 0;
  for (const r of rows) {
    const { band } = prices.bandOf(r.cost_model, limits, r.above);
    if (band === undefined) {
      unpriced += Number(r.requests);
      continue;
    }
    picoDollars += costPicoDollars({ input: BigInt(r.input), cacheRead: BigInt(r.cache_read), cacheWrite: BigInt(r.cache_write), output: BigInt(r.output), reasoning: BigInt(r.reasoning) }, band);
  }
  return { picoDollars, unpriced };
}
