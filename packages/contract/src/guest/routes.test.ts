import { describe, expect, it } from 'vitest';
import { namedSchemas } from '../registry.js';
import { GuestRoutes, type GuestRoute } from './routes.js';

const idOf = (schema: unknown) => namedSchemas.find((entry) => entry.schema === schema)?.id;
const routes = Object.entries(GuestRoutes) as [string, GuestRoute][];

describe('guest routes', () => {
  it('keys are job operation names and paths are unique', () => {
    for (const [operation] of routes) expect(operation).toMatch(/^[a-z_]+(\.[a-z_]+)?$/);
    const paths = routes.map(([, r]) => `${r.transport === 'http' ? r.method : 'WS'} ${r.path}`);
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('versions every path but /healthz, which alone needs no token', () => {
    for (const [operation, route] of routes) {
      if (operation === 'healthz') {
        expect(route).toMatchObject({ path: '/healthz', auth: false });
        continue;
      }
      expect(route.path.startsWith('/v1/')).toBe(true);
      expect(route.auth).toBe(true);
    }
  });

  it('uses named Guest schemas on both ends', () => {
    for (const [, route] of routes) {
      const used =
        route.transport === 'http'
          ? [route.request, route.response]
          : [route.client_message, route.server_message];
      for (const schema of used) {
        if (schema === null) continue;
        expect(idOf(schema)).toMatch(/^Guest[A-Z]/);
      }
    }
  });

  it('GETs have no body and only the archive is binary', () => {
    for (const [operation, route] of routes) {
      if (route.transport !== 'http') continue;
      if (route.method === 'GET') expect(route.request).toBeNull();
      expect(route.response === null).toBe(operation === 'recording.archive');
    }
  });

  it('every action endpoint answers an ActionResult', () => {
    for (const op of ['act.element', 'act.pixel', 'windows.close'] as const) {
      expect(idOf(GuestRoutes[op].response)).toBe('GuestActionResult');
    }
  });
});
