#!/usr/bin/env node
// Writes src/generated/routes.ts: the method, path and retry facts of every REST operation,
// taken from @cubicle/contract's route table (its dist: build the contract first). The SDK needs
// these at run time but must not load zod, so it carries this small table instead of the
// contract; test/drift.test.ts fails when the table and the contract disagree.
import { writeFileSync } from 'node:fs';
import { renderRouteTable } from './render-route-table.mjs';

const out = new URL('../src/generated/routes.ts', import.meta.url);
writeFileSync(out, await renderRouteTable());
process.stdout.write(`wrote ${out.pathname}\n`);
