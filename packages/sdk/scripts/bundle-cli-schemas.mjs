#!/usr/bin/env node
// Bundles src/cli/pool-schema.ts (the contract's PoolSpec and ResourceName, with zod) into one
// self-contained dist/cli/pool-schema.js, over what tsc emitted: the published CLI validates a
// pools file with the contract's own rules without depending on the private contract package.
// Run after `tsc -p tsconfig.build.json` when packing; `--outfile <path>` writes elsewhere (tests).
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = new URL('..', import.meta.url);
const at = process.argv.indexOf('--outfile');
const outfile =
  at > 0 ? process.argv[at + 1] : fileURLToPath(new URL('dist/cli/pool-schema.js', root));
await build({
  entryPoints: [fileURLToPath(new URL('src/cli/pool-schema.ts', root))],
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  legalComments: 'eof',
  outfile,
  logLevel: 'warning',
});
process.stdout.write(`wrote ${outfile}\n`);
