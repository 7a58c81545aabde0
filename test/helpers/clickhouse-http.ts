// A ClickHouse HTTP interface over the embedded engine, for tests of the sink's server path (no
// ClickHouse server can be installed here: Debian's is from 2018). It answers as the server's
// HTTP interface does for what @clickhouse/client sends: the query in the `query` URL parameter
// or the body (or both: a statement, then its data), `param_*` query parameters, settings as URL
// parameters, results in the query's FORMAT, errors as status 500 with the engine's exception text
// and X-ClickHouse-Exception-Code. An insert's data is written to a file and read by the same
// engine with FROM INFILE, so the bytes a client sends are parsed by the real engine.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface ChdbSession {
  query(sql: string, format?: string): string;
  close?(): void;
  cleanup?(): void;
}

export interface ClickHouseHttp {
  readonly url: string;
  /** Every statement received, as sent (the query text, without data). */
  readonly statements: string[];
  /** Runs SQL on the engine directly (TabSeparated unless the SQL says FORMAT). */
  query(sql: string): string;
  close(): Promise<void>;
}

const sqlString = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** Client parameters that are not settings. */
const NOT_SETTINGS = new Set(['query', 'query_id', 'database', 'default_format', 'session_id', 'user', 'password']);

export async function startClickHouseHttp(dataDir: string): Promise<ClickHouseHttp> {
  const { Session } = (await import('chdb')) as unknown as { Session: new (path: string) => ChdbSession };
  const session = new Session(dataDir);
  const inbox = join(dataDir, '..', 'http-inbox');
  mkdirSync(inbox, { recursive: true });
  const statements: string[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = Buffer.concat(chunks);
      const fromUrl = url.searchParams.get('query');
      try {
        const params: string[] = [];
        const settings: string[] = [];
        for (const [k, v] of url.searchParams) {
          if (k.startsWith('param_')) params.push(`SET ${k} = ${sqlString(v)}`);
          else if (!NOT_SETTINGS.has(k)) settings.push(`${k} = ${/^-?\d+(\.\d+)?$/.test(v) ? v : sqlString(v)}`);
        }
        let sql: string;
        if (fromUrl !== null && body.length > 0) {
          // A statement with data: the data goes to a file the engine reads.
          statements.push(fromUrl);
          const m = /^([\s\S]*?)\s+FORMAT\s+(\w+)\s*$/i.exec(fromUrl);
          if (!m || !/^\s*INSERT\b/i.test(fromUrl)) throw new Error(`Code: 62. DB::Exception: this test server takes data only for INSERT … FORMAT x, not: ${fromUrl}`);
          const file = join(inbox, `${++n}.data`);
          writeFileSync(file, body);
          const input = /\binput\(('(?:[^'\\]|\\.)*')\)/.exec(m[1] as string);
          // INSERT … SELECT … FROM input('structure'): the same SELECT over the file.
          if (input) sql = `${(m[1] as string).replace(input[0], `file(${sqlString(file)}, ${m[2]}, ${input[1]})`)}${settings.length > 0 ? ` SETTINGS ${settings.join(', ')}` : ''}`;
          else sql = `${m[1]} FROM INFILE ${sqlString(file)}${settings.length > 0 ? ` SETTINGS ${settings.join(', ')}` : ''} FORMAT ${m[2]}`;
        } else {
          sql = fromUrl ?? body.toString('utf8');
          statements.push(sql);
          if (settings.length > 0) session.query(`SET ${settings.join(', ')}`);
        }
        for (const p of params) session.query(p);
        const out = session.query(sql, 'TabSeparated');
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8', 'X-ClickHouse-Summary': '{}' });
        res.end(out);
      } catch (error) {
        const message = String((error as Error).message ?? error);
        const code = /Code: (\d+)/.exec(message)?.[1] ?? '1001';
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=UTF-8', 'X-ClickHouse-Exception-Code': code });
        res.end(/Code: \d+/.test(message) ? message : `Code: ${code}. DB::Exception: ${message}`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/default`,
    statements,
    query: (sql) => session.query(sql, 'TabSeparated'),
    close: async () => {
      await new Promise((r) => server.close(r));
      session.close?.();
      rmSync(inbox, { recursive: true, force: true });
    },
  };
}
