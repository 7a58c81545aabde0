// Part of `npm run build`: bundles the compiled statusline command (dist/cli/statusline-command.js
// and the few modules it imports) into one file, dist/statusline.mjs, with the list of the source
// files it was built from (dist/statusline.inputs.json). Claude Code runs the statusline on every
// prompt: one file loads ~7 ms faster than fifteen, and bin/toolcanon.mjs checks those sources'
// times instead of walking all of src/ (~6 ms). esbuild is tsx's, a runtime dependency.
import { writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const result = await build({
  entryPoints: [resolve(root, 'dist/cli/statusline-command.js')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  outfile: resolve(root, 'dist/statusline.mjs'),
  metafile: true,
  logLevel: 'warning',
});
// dist/a/b.js was compiled from src/a/b.ts.
const sources = Object.keys(result.metafile.inputs).map((p) => relative(root, resolve(root, p)).replace(/^dist\//, 'src/').replace(/\.js$/, '.ts'));
writeFileSync(resolve(root, 'dist/statusline.inputs.json'), `${JSON.stringify(sources)}\n`);
