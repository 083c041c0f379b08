#!/usr/bin/env node
// Writes src/generated/routes.ts (the method, path and retry facts of every REST operation, from
// @cubicle/contract's route table: build the contract first) and src/generated/api-types.ts (the
// request and answer types, from the contract's openapi.json). The SDK needs the first at run
// time and the second in its declarations, and must load neither zod nor the private contract;
// src/generated/routes.test.ts fails when either file and the contract disagree.
import { writeFileSync } from 'node:fs';
import { renderApiTypes } from './render-api-types.mjs';
import { renderRouteTable } from './render-route-table.mjs';

for (const [name, render] of [
  ['routes.ts', renderRouteTable],
  ['api-types.ts', renderApiTypes],
]) {
  const out = new URL(`../src/generated/${name}`, import.meta.url);
  writeFileSync(out, await render());
  process.stdout.write(`wrote ${out.pathname}\n`);
}
