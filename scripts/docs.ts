// The generated parts of the docs: each lives between `<!-- NAME:start -->` and `<!-- NAME:end -->`
// in its page and is written from the code, never by hand.
//   docs/catalogue.md  catalogue   the tool catalogue (what `toolcanon catalogue` prints)
//   docs/tables.md     tables      every table's columns, types and engine, from the schema snapshot
//   docs/cli.md        cli         `toolcanon --help` and `toolcanon report --help`, as the CLI prints them
// Usage: npx tsx scripts/docs.ts          rewrites the regions
//        npx tsx scripts/docs.ts --check  exit 1 and name each region that differs
// test/docs/docs.test.ts fails while a region differs from what the code produces.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCatalogueMarkdown } from '../src/catalogue/index.ts';
import { SCHEMA_SNAPSHOT } from '../src/sink/schema-snapshot.ts';
import { declaredTypes } from '../src/sink/native.ts';

export const ROOT = new URL('..', import.meta.url).pathname;

/** The tables of the schema snapshot: columns with their declared types, then the engine clause. */
export function renderTablesMarkdown(): string {
  const out: string[] = [`Schema version ${SCHEMA_SNAPSHOT.version} (\`src/sink/schema-snapshot.ts\`, written by \`npx tsx scripts/schema-snapshot.ts\` from the migrations in \`src/sink/ddl.ts\`).`];
  for (const t of SCHEMA_SNAPSHOT.tables) {
    const engine = /\)\s*(ENGINE = .*)$/s.exec(t.create)?.[1]?.replace(/ SETTINGS .*$/s, '') ?? '';
    out.push('', `### \`${t.name}\``, '', `\`${engine}\``, '', '| column | type |', '| --- | --- |');
    for (const [name, type] of declaredTypes(t.create)) out.push(`| \`${name}\` | \`${type}\` |`);
  }
  return out.join('\n');
}

/** The CLI's own help texts, run through the bin as a user runs them. */
export function renderCliMarkdown(): string {
  const run = (args: string[]): string => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/toolcanon.mjs'), ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    if (r.status !== 0) throw new Error(`toolcanon ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return r.stdout.trimEnd();
  };
  return ['### `toolcanon --help`', '', '```text', run(['--help']), '```', '', '### `toolcanon report --help`', '', '```text', run(['report', '--help']), '```'].join('\n');
}

export const GENERATED: readonly { readonly page: string; readonly name: string; readonly render: () => string }[] = [
  { page: 'docs/catalogue.md', name: 'catalogue', render: renderCatalogueMarkdown },
  { page: 'docs/tables.md', name: 'tables', render: renderTablesMarkdown },
  { page: 'docs/cli.md', name: 'cli', render: renderCliMarkdown },
];

/** The text between a page's markers (undefined when the page has none). */
export function region(text: string, name: string): string | undefined {
  const m = new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)\\n?<!-- ${name}:end -->`).exec(text);
  return m?.[1];
}

function replaceRegion(text: string, name: string, body: string): string {
  if (region(text, name) === undefined) throw new Error(`no <!-- ${name}:start --> … <!-- ${name}:end --> markers`);
  return text.replace(new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?\\n?(<!-- ${name}:end -->)`), (_, a: string, b: string) => `${a}${body}\n${b}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const g of GENERATED) {
    const path = join(ROOT, g.page);
    const text = readFileSync(path, 'utf8');
    const body = g.render();
    if (region(text, g.name) === body) continue;
    if (check) {
      console.error(`${g.page}: the ${g.name} region differs from what the code produces (npx tsx scripts/docs.ts)`);
      stale++;
    } else {
      writeFileSync(path, replaceRegion(text, g.name, body));
      console.log(`${g.page}: ${g.name} written`);
    }
  }
  process.exit(stale > 0 ? 1 : 0);
}
