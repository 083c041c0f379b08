import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Imports in the guest driver run one way. A circle between modules (a11y's element actions and
// the key paths, the two desktop launchers, screen and recording did) means neither side can be
// read, tested or moved alone, and ESM hands one side an undefined binding at start-up.
const src = dirname(fileURLToPath(import.meta.url));

/** sourceFiles lists the driver's modules (tests excluded: they import whatever they test). */
function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** The relative modules a file imports: static, type-only, re-exports and dynamic import(). */
const SPECIFIER = /(?:\bfrom|\bimport\(?)\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(src)) {
    const text = readFileSync(file, 'utf8');
    const deps = [...text.matchAll(SPECIFIER)].map(([, spec]) =>
      relative(src, resolve(dirname(file), spec!.replace(/\.js$/, '.ts'))),
    );
    graph.set(relative(src, file), [...new Set(deps)]);
  }
  return graph;
}

/** cycles returns the strongly connected parts of more than one node (Tarjan), each sorted. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      part.push(w);
    } while (w !== v);
    if (part.length > 1 || graph.get(v)!.includes(v)) found.push(part.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/**
 * Wiring may import any folder: server/ (the app, GuestDeps and the per-app state its routes
 * share) and each folder's routes.ts, which puts that folder on the app. The capability code
 * below them must form layers: no folder imports one that imports it back.
 */
const isWiring = (file: string) =>
  file.startsWith('server/') || file.endsWith('/routes.ts') || !file.includes('/');

function folderGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, deps] of graph) {
    if (isWiring(file)) continue;
    const from = file.split('/')[0]!;
    const to = folders.get(from) ?? folders.set(from, new Set()).get(from)!;
    for (const dep of deps) {
      const folder = dep.split('/')[0]!;
      if (folder !== from && !isWiring(dep)) to.add(folder);
    }
  }
  return new Map([...folders].map(([k, v]) => [k, [...v]]));
}

describe('driver-guest imports', () => {
  const graph = importGraph();

  it('reads every module and its relative imports', () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get('a11y/element-actions.ts')).toContain('a11y/element-target.ts');
    expect(graph.get('desktop/start-desktop.ts')).toContain('server/app.ts'); // dynamic import()
  });

  it('form no circle between modules', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('form no circle between capability folders', () => {
    expect(cycles(folderGraph(graph))).toEqual([]);
  });
});
