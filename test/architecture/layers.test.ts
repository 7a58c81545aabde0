// The house's layers (docs/architecture.md) as a test: every relative import of src/ goes to its
// own folder, or to a folder of the same or a lower layer; within a layer the folders import
// each other without a circle. A new folder must be given its layer here (the test names it).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

/** From the base up: a folder (or top-level module) may import its own layer and those before it. */
const LAYERS: readonly (readonly string[])[] = [
  ['canonical', 'util', 'config'],
  ['catalogue', 'model', 'tables'],
  ['accounting', 'redact', 'cost', 'transform', 'mcp', 'discovery'],
  ['decode'],
  ['derive'],
  ['sink'],
  ['pipeline', 'source', 'importers', 'worker', 'kafka', 'thread'],
  ['report', 'export'],
  ['serve'],
  ['watch', 'statusline'],
  ['cli'],
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith('.ts') ? [full] : [];
  });
}

/** src/a/b.ts -> a; src/pipeline.ts -> pipeline. */
function folderOf(file: string): string {
  const r = relative(SRC, file);
  return r.includes('/') ? (r.split('/')[0] as string) : r.replace(/\.ts$/, '');
}

const IMPORT = /^(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'/gm;

function edges(): Map<string, Map<string, string[]>> {
  const out = new Map<string, Map<string, string[]>>();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const to = folderOf(resolve(dirname(file), m[1] as string));
      if (to === from) continue;
      const targets = out.get(from) ?? new Map<string, string[]>();
      out.set(from, targets);
      targets.set(to, [...(targets.get(to) ?? []), relative(SRC, file)]);
    }
  }
  return out;
}

const layerOf = new Map(LAYERS.flatMap((folders, rank) => folders.map((f) => [f, rank] as const)));

describe('the layers of src/', () => {
  const graph = edges();

  it('every folder has a layer', () => {
    const folders = [...new Set(sourceFiles(SRC).map(folderOf))].sort();
    expect(folders.filter((f) => !layerOf.has(f))).toEqual([]);
  });

  it('imports go to the same or a lower layer only', () => {
    const upward: string[] = [];
    for (const [from, targets] of graph) {
      for (const [to, files] of targets) {
        if ((layerOf.get(to) ?? -1) > (layerOf.get(from) ?? -1)) upward.push(`${from} -> ${to} (${files.join(', ')})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('no circle between folders', () => {
    const circles: string[] = [];
    const visit = (node: string, path: string[]): void => {
      for (const next of graph.get(node)?.keys() ?? []) {
        const at = path.indexOf(next);
        if (at >= 0) {
          // One name per circle, whichever folder it was found from: rotated to start at its least.
          const ring = path.slice(at);
          const least = ring.indexOf([...ring].sort()[0] as string);
          const rotated = [...ring.slice(least), ...ring.slice(0, least)];
          circles.push([...rotated, rotated[0]].join(' -> '));
        }
        else visit(next, [...path, next]);
      }
    };
    for (const start of graph.keys()) visit(start, [start]);
    expect([...new Set(circles)].sort()).toEqual([]);
  });

  it('the driver (pipeline/) and the derivations (derive/) reach storage only through the ports in model/sink.ts', () => {
    for (const folder of ['pipeline', 'derive']) expect([...(graph.get(folder)?.keys() ?? [])], folder).not.toContain('sink');
    // And the importers are adapters: none reaches the driver (the import runner is pipeline/import.ts).
    expect([...(graph.get('importers')?.keys() ?? [])]).not.toContain('pipeline');
    expect(graph.get('pipeline')?.has('importers')).toBe(true);
  });

  it('the test sees the imports (a parser that found none would pass the others)', () => {
    expect(graph.get('pipeline')?.has('accounting')).toBe(true);
    expect(graph.get('cli')?.size).toBeGreaterThan(5);
  });
});
