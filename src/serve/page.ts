// The owner's own pages, behind its token check (src/serve/owner.ts): the HTML report at `/`
// (src/report/html.ts, the page `report html` writes) that reloads itself when the tables change,
// and the small JSON it polls for that, `/toolcanon/state`. Loaded on the first request, so an
// owner nobody looks at never loads the report code.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ClickHouseSink } from '../sink/clickhouse.ts';
import { PriceTable } from '../cost/prices.ts';
import { buildHtmlReport } from '../report/html.ts';
import type { PageRoutes } from './owner.ts';

/** The path the page polls. */
export const STATE_PATH = '/toolcanon/state';
/** How often the page asks whether the tables changed. */
export const POLL_MS = 1_000;

/** What changes whenever a table does: an insert makes a part (a merge too: the page reloads for nothing then). */
const STATE_SQL = `SELECT toString(sum(rows)) AS rows, toString(count()) AS parts, toString(max(modification_time)) AS changed
  FROM system.parts WHERE database = currentDatabase() AND active`;

/** The report's page, allowed to poll its own origin, with the script that reloads it on a change. */
export function livePage(html: string, version: string): string {
  const reload = `<script>(function(){var v=${JSON.stringify(version)};function poll(){fetch(${JSON.stringify(STATE_PATH)},{cache:'no-store',credentials:'same-origin'}).then(function(r){return r.ok?r.json():null}).then(function(s){if(s&&s.version!==v){location.reload();}else{setTimeout(poll,${POLL_MS});}}).catch(function(){setTimeout(poll,${POLL_MS});});}setTimeout(poll,${POLL_MS});})();</script>`;
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
  let cached: { version: string; html: string } | undefined;
  const version = async (s: ClickHouseSink): Promise<string> => {
    const [r] = await s.queryRows<{ rows: string; parts: string; changed: string }>(STATE_SQL);
    return `${r?.rows ?? 0}/${r?.parts ?? 0}/${r?.changed ?? ''}`;
  };
  return {
    async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
      const get = req.method === 'GET' || req.method === 'HEAD';
      if (get && url.pathname === STATE_PATH) {
        const v = await version(await open());
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify({ version: v }));
        return true;
      }
      // GET / without a query is the page; a ClickHouse request (`?query=`, a POST) goes on.
      if (get && url.pathname === '/' && !url.searchParams.has('query')) {
        const s = await open();
        const v = await version(s);
        if (cached?.version !== v) {
          const html = await buildHtmlReport(s, { prices, source: `embedded ClickHouse at ${dataDir}, live (served by process ${process.pid})` });
          cached = { version: v, html: livePage(html, v) };
        }
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : cached.html);
        return true;
      }
      return false;
    },
    async close(): Promise<void> {
      const s = await sink?.catch(() => undefined);
      sink = undefined;
      await s?.close();
    },
  };
}
