import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Cubicle } from '../client.js';
import { ClaimHandle } from '../claim-handle.js';
import { methodOf } from '../method-map.js';
import { routeTable } from './routes.js';

// The drift test: the SDK carries a copy of the contract's route facts (it must not load zod at
// run time). A contract change the SDK has not taken fails here, naming what to regenerate.
describe('the SDK and the contract', () => {
  it('the generated route table is what the contract renders now (npm run generate -w @cubicle/sdk)', async () => {
    // @ts-expect-error: a plain .mjs script without types
    const { renderRouteTable } = (await import('../../scripts/render-route-table.mjs')) as {
      renderRouteTable(): Promise<string>;
    };
    const committed = readFileSync(new URL('./routes.ts', import.meta.url), 'utf8');
    expect(committed).toBe(await renderRouteTable());
  });

  it('the generated request and answer types are what openapi.json renders now (npm run generate -w @cubicle/sdk)', async () => {
    // @ts-expect-error: a plain .mjs script without types
    const { renderApiTypes } = (await import('../../scripts/render-api-types.mjs')) as {
      renderApiTypes(): Promise<string>;
    };
    const committed = readFileSync(new URL('./api-types.ts', import.meta.url), 'utf8');
    expect(committed).toBe(await renderApiTypes());
  });

  it('every operation of openapi.json has an SDK method, and every method exists', () => {
    const doc = JSON.parse(
      readFileSync(new URL('../../../contract/openapi.json', import.meta.url), 'utf8'),
    ) as { paths: Record<string, Record<string, { operationId: string }>> };
    const documented = Object.values(doc.paths).flatMap((ops) =>
      Object.values(ops).map((op) => op.operationId),
    );
    const byOperationId = new Map<string, keyof typeof routeTable>(
      Object.entries(routeTable).map(([name, r]) => [
        r.operationId,
        name as keyof typeof routeTable,
      ]),
    );
    const cubicle = new Cubicle({ baseUrl: 'http://127.0.0.1:1', apiKey: 'x' });
    const handle = new ClaimHandle(cubicle.transport, { id: 'clm_x' } as never);
    const missing: string[] = [];
    for (const operationId of documented) {
      const name = byOperationId.get(operationId);
      const method = name ? methodOf[name] : undefined;
      if (!method) {
        missing.push(`${operationId}: no SDK method`);
        continue;
      }
      const [head, ...rest] = method.split('.');
      let target: unknown =
        head === 'claim' ? handle : (cubicle as unknown as Record<string, unknown>)[head!];
      for (const part of rest) target = (target as Record<string, unknown>)?.[part];
      if (typeof target !== 'function') missing.push(`${operationId}: ${method} is not a function`);
    }
    expect(missing).toEqual([]);
    // And nothing the SDK calls has left the document.
    expect([...byOperationId.keys()].sort()).toEqual([...documented].sort());
  });
});
