// The source scans of the lifecycle tests (state-writes, claim-status) read the same files:
// every TypeScript/JavaScript source under apps/*/src and packages/*/src, tests, build output
// and generated code aside. Paths are relative to the repository root.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

const SKIPPED_DIRS = ['node_modules', 'dist', 'generated', '.next', '.turbo'];

/** sourcesUnder lists the non-test sources under `dir` (relative to the repository root). */
export function sourcesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.includes(entry.name)) out.push(...sourcesUnder(path));
    } else if (/\.(?:ts|tsx|mts|mjs)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name))
      out.push(path);
  }
  return out;
}

/** appAndPackageSources lists the sources of every app and package. */
export function appAndPackageSources(): string[] {
  return ['apps', 'packages']
    .flatMap((top) => readdirSync(join(repoRoot, top)).map((name) => `${top}/${name}/src`))
    .filter((dir) => {
      try {
        return readdirSync(join(repoRoot, dir)).length > 0;
      } catch {
        return false;
      }
    })
    .flatMap(sourcesUnder);
}

export const readSource = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

/** lineOf is the 1-based line of `index` in `text`. */
export const lineOf = (text: string, index: number | undefined) =>
  text.slice(0, index).split('\n').length;
