import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The package's face is index.ts, a named list of what the rest of the repository uses. This
// keeps it that way: no `export *` (a module's every helper would leak out again), and no name
// that nothing outside the package mentions (it would be public for no one).
const root = fileURLToPath(new URL('../../../', import.meta.url));
const index = readFileSync(fileURLToPath(new URL('./index.ts', import.meta.url)), 'utf8');
const SKIP = new Set(['node_modules', 'dist', '.next', '.turbo', 'generated', 'control-plane']);

/** sourcesOutside lists the repository's code that may import the package (not the package). */
function sourcesOutside(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourcesOutside(path, out);
    else if (/\.(ts|tsx|mts|mjs|js)$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** exportedNames reads the names of `export { a, type B } from '…'` lists. */
function exportedNames(source: string): string[] {
  return [...source.matchAll(/^export (?:type )?\{([^}]*)\}/gm)].flatMap(([, list]) =>
    list!
      .split(',')
      .map((s) => s.trim().replace(/^type\s+/, ''))
      .filter(Boolean),
  );
}

describe('the public face of @cubicle/control-plane', () => {
  it('is a named list', () => {
    expect(index).not.toMatch(/^export \*/m);
    expect(exportedNames(index).length).toBeGreaterThan(0);
  });

  it('names only what code outside the package uses', () => {
    const users = ['apps', 'packages', 'test', 'scripts']
      .flatMap((d) => sourcesOutside(join(root, d)))
      .map((f) => readFileSync(f, 'utf8'))
      .filter((text) => text.includes('control-plane'));
    const unused = exportedNames(index).filter(
      (name) => !users.some((text) => new RegExp(`\\b${name}\\b`).test(text)),
    );
    expect(unused).toEqual([]);
  });
});
