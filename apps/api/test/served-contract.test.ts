// The published API is the served API: every operation of packages/contract/openapi.json (the
// committed document clients generate from) is mounted on the real app, and each operation's
// published body limit is the one the server applies, byte for byte.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { toFastifyPath } from '@cubicle/contract/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullAppFixture, type FullAppFixture } from './full-app-fixture.js';

interface Operation {
  operationId: string;
  parameters: { name: string; in: string; schema: { pattern?: string } }[];
  'x-cubicle-max-body-bytes'?: number;
  'x-cubicle-role'?: string;
  security: unknown[];
}
const documentPath = fileURLToPath(
  new URL('../../../packages/contract/openapi.json', import.meta.url),
);
const doc = JSON.parse(readFileSync(documentPath, 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  'x-cubicle-websockets': Record<string, { get: Operation }>;
};
const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
);
// WebSocket endpoints: published apart from the paths, served all the same.
const sockets = Object.entries(doc['x-cubicle-websockets']).map(([path, ops]) => ({
  path,
  op: ops.get,
}));

/** urlOf fills each path placeholder with a well-formed value (an id of the right kind) that names nothing. */
function urlOf(path: string, op: Operation): string {
  return path.replace(/\{([a-z_]+)\}/g, (_m, name: string) => {
    const pattern = op.parameters.find((p) => p.in === 'path' && p.name === name)?.schema.pattern;
    const prefix = pattern ? /^\^([a-z]+)_/.exec(pattern)?.[1] : undefined;
    return prefix ? `${prefix}_${'0'.repeat(26)}` : 'nothing-here';
  });
}

/** jsonOfSize is a JSON object of exactly `bytes` bytes. */
const jsonOfSize = (bytes: number) => `{"x":"${'a'.repeat(bytes - 8)}"}`;

describe('the published document is what the server serves', () => {
  let fx: FullAppFixture;
  beforeAll(async () => {
    fx = await fullAppFixture();
  });
  afterAll(async () => fx?.close());

  it('documents operations at all (the document is read)', () => {
    expect(operations.length).toBeGreaterThan(40);
  });

  it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))(
    '%s is mounted',
    async (_name, { path, method, op }) => {
      const url = urlOf(path, op);
      expect(
        fx.app.hasRoute({ method: method as 'GET', url: toFastifyPath(path) }),
        `${op.operationId} is not mounted`,
      ).toBe(true);
      const res = await fx.app.inject({
        method: method as 'GET',
        url,
        headers: { authorization: fx.a.admin },
      });
      expect(res.json<{ error?: { code: string } }>().error?.code ?? 'ok').not.toBe(
        'route_not_found',
      );
    },
  );

  it('documents WebSocket endpoints (the run event stream and the viewer stream at least)', () => {
    expect(sockets.map((s) => s.op.operationId)).toEqual(
      expect.arrayContaining(['streamRunEventsSocket', 'streamViewer']),
    );
  });

  it.each(sockets.map((s) => [`GET ${s.path} (WebSocket)`, s] as const))(
    '%s is mounted and refuses a plain GET with the envelope',
    async (_name, { path, op }) => {
      expect(
        fx.app.hasRoute({ method: 'GET', url: toFastifyPath(path) }),
        `${op.operationId} is not mounted`,
      ).toBe(true);
      const res = await fx.app.inject({
        method: 'GET',
        url: urlOf(path, op),
        headers: { authorization: fx.a.admin },
      });
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
      expect(res.json<{ error: { code: string } }>().error.code).not.toBe('route_not_found');
    },
  );

  const withBodies = operations.filter((o) => o.method !== 'GET');
  it.each(withBodies.map((o) => [`${o.method} ${o.path}`, o] as const))(
    '%s applies its published body limit',
    async (_name, { path, method, op }) => {
      const limit = op['x-cubicle-max-body-bytes'];
      expect(limit, `${op.operationId} publishes no x-cubicle-max-body-bytes`).toBeGreaterThan(0);
      const send = (payload: string) =>
        fx.app.inject({
          method: method as 'POST',
          url: urlOf(path, op),
          headers: { authorization: fx.a.admin, 'content-type': 'application/json' },
          payload,
        });
      const over = await send(jsonOfSize(limit! + 1));
      expect(over.statusCode, over.body.slice(0, 200)).toBe(413);
      expect(over.json().error.code).toBe('payload_too_large');
      const at = await send(jsonOfSize(limit!));
      expect(at.statusCode, at.body.slice(0, 200)).not.toBe(413);
    },
  );
});
