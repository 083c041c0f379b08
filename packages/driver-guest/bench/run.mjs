#!/usr/bin/env node
// Benchmark harness of the guest driver: `npm run bench -w @cubicle/driver-guest -- --json`.
// Each bench/*.bench.mjs file exports `name` and `run(emit, options)`; `emit` prints one result
// object per call: one JSON line with --json, a readable line otherwise. Benches import the built
// package (dist/), which the npm script builds first. `--only <name>` runs the benches whose name
// contains it; `--rows <n>` sizes the web benches' table page (default 2,000 rows, 8,247 a11y
// elements in Chromium; ~1,450 rows is the issue's ~6,000-node page). Goals live in the issue and
// the README, never as assertions here.
import { readdir } from 'node:fs/promises';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { json: { type: 'boolean' }, only: { type: 'string' }, rows: { type: 'string' } },
  allowPositionals: true,
});

const emit = (result) => {
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    const { bench, ...rest } = result;
    const fields = Object.entries(rest).map(
      ([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`,
    );
    process.stdout.write(`${bench.padEnd(24)} ${fields.join(' ')}\n`);
  }
};

const dir = new URL('./', import.meta.url);
const files = (await readdir(dir)).filter((f) => f.endsWith('.bench.mjs')).sort();
let failed = 0;
for (const file of files) {
  const mod = await import(new URL(file, dir).href);
  if (values.only && !String(mod.name).includes(values.only)) continue;
  try {
    await mod.run(emit, {
      json: values.json === true,
      ...(values.rows ? { rows: Number(values.rows) } : {}),
    });
  } catch (err) {
    failed += 1;
    process.stderr.write(`bench ${mod.name} failed: ${err instanceof Error ? err.stack : err}\n`);
  }
}
process.exit(failed === 0 ? 0 : 1);
