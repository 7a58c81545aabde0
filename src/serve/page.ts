// The owner's own pages, behind its token check (src/serve/owner.ts): the HTML report at `/`
// (src/report/html.ts, the page `report html` writes) that reloads itself when the tables change,
// and the small JSON it polls for that, `/toolcanon/state`. Loaded on the first request, so an
// owner nobody looks at never loads the report code.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ClickHouseSink } from '../sink/clickhouse.ts';
import { PriceTable } from '../cost/prices.ts';
import { buildHtmlReport } from '../report/html.ts';
import type { PageRoutes } from './owner.ts';

/** The path the page asks whether the tables changed: `?wait=VERSION` answers once they differ from it (or after WAIT_MS). */
export const STATE_PATH = '/toolcanon/state';
/** How often the owner looks at the tables while a page waits. */
const CHECK_MS = 200;
/** How many of the report's queries a rebuild runs at once. */
const PAGE_QUERIES_AT_ONCE = 4;
/** The longest one wait is held open. */
const WAIT_MS = 20_000;

/** What changes whenever a table does: an insert makes a part (a merge too: the page reloads for nothing then). */
const STATE_SQL = `SELECT toString(sum(rows)) AS rows, toString(count()) AS parts, toString(max(modification_time)) AS changed
  FROM system.parts WHERE database = currentDatabase() AND active`;

/** The report's page, allowed to poll its own origin, with the script that reloads it on a change. */
export function livePage(html: string, version: string): string {
  // One request held open until the tables change (then a reload), asked again at once otherwise.
  const reload = `<script>(function(){var v=${JSON.stringify(version)};function poll(){fetch(${JSON.stringify(STATE_PATH)}+'?wait='+encodeURIComponent(v),{cache:'no-store',credentials:'same-origin'}).then(function(r){return r.ok?r.json():null}).then(function(s){if(s&&s.version!==v){location.reload();}else{setTimeout(poll,s?0:1000);}}).catch(function(){setTimeout(poll,1000);});}poll();})();</script>`;
  const csp = html.replace("default-src 'none';", "default-src 'none'; connect-src 'self';");
  const at = csp.lastIndexOf('</body>');
  return at < 0 ? csp + reload : `${csp.slice(0, at)}${reload}\n${csp.slice(at)}`;
}

export function pageRoutes(clickhouseUrl: string, dataDir: string): PageRoutes {
  let sink: Promise<ClickHouseSink> | undefined;
  const open = (): Promise<ClickHouseSink> => {
    sink ??= ClickHouseSink.open({ clickhouseUrl }, { createDatabase: false }).catch((error: unknown) => {
      sink = undefined;
      throw error;
    });
    return sink;
  };
  const prices = new PriceTable();
  let closed = false;
  /** The latest page, built once per version; while one is being built, it is the page served. */
  let built: { version: string; html: Promise<string>; done: boolean } | undefined;
  const version = async (s: ClickHouseSink): Promise<string> => {
    const [r] = await s.queryRows<{ rows: string; parts: string; changed: string }>(STATE_SQL);
    return `${r?.rows ?? 0}/${r?.parts ?? 0}/${r?.changed ?? ''}`;
  };
  const pageOf = (s: ClickHouseSink, v: string): Promise<string> => {
    // A build under way is served even when the tables moved on meanwhile (a merge, the next
    // insert): its page names its own version, so the page asks again and reloads once more.
    if (built === undefined || (built.version !== v && built.done)) {
      const entry = { version: v, html: Promise.resolve(''), done: false };
      // The report's queries a few at a time: the engine answers them side by side.
      entry.html = buildHtmlReport(s, { prices, concurrency: PAGE_QUERIES_AT_ONCE, source: `embedded ClickHouse at ${dataDir}, live (served by process ${process.pid})` }).then((h) => livePage(h, v));
      entry.html.then(
        () => (entry.done = true),
        () => {
          if (built === entry) built = undefined;
        },
      );
      built = entry;
    }
    return built.html;
  };
  return {
    async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
      const get = req.method === 'GET' || req.method === 'HEAD';
      if (get && url.pathname === STATE_PATH) {
        const s = await open();
        const since = url.searchParams.get('wait');
        let v = await version(s);
        const until = Date.now() + WAIT_MS;
        let gone = false;
        res.once('close', () => (gone = true));
        while (since !== null && v === since && !closed && !gone && Date.now() < until) {
          await new Promise((r) => setTimeout(r, CHECK_MS));
          v = await version(s);
        }
        // A writer's batch is several inserts (one per table) in a row: the page waits for the last.
        for (let settle = 0; since !== null && v !== since && settle < 5; settle++) {
          await new Promise((r) => setTimeout(r, CHECK_MS / 2));
          const again = await version(s);
          if (again === v) break;
          v = again;
        }
        // The page the reload will ask for is built from now on.
        if (v !== since) pageOf(s, v).catch(() => undefined);
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify({ version: v }));
        return true;
      }
      // GET / without a query is the page; a ClickHouse request (`?query=`, a POST) goes on.
      if (get && url.pathname === '/' && !url.searchParams.has('query')) {
        const s = await open();
        const html = await pageOf(s, await version(s));
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : html);
        return true;
      }
      return false;
    },
    async close(): Promise<void> {
      closed = true;
      const s = await sink?.catch(() => undefined);
      sink = undefined;
      await s?.close();
    },
  };
}
