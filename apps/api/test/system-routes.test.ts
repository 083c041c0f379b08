import { ErrorEnvelope } from '@cubicle/contract/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullAppFixture, type FullAppFixture } from './full-app-fixture.js';

/** The envelope and system routes of the whole app, with its real database and Redis. */
describe('API envelope and system routes', () => {
  let fx: FullAppFixture;
  beforeAll(async () => {
    fx = await fullAppFixture({
      // A probe beside the database and Redis ones, failing as a broken dependency would.
      checks: {
        search: async () => {
          throw new Error('down: secret detail');
        },
      },
    });
  });
  afterAll(async () => fx?.close());

  it('GET /v1/version answers the contract', async () => {
    const res = await fx.app.inject({ method: 'GET', url: '/v1/version' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      service: 'cubicle-api',
      api_version: 'v1',
      guest_protocol_version: 'v1',
    });
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it('unknown routes answer route_not_found in the envelope with the request id', async () => {
    const res = await fx.app.inject({
      method: 'GET',
      url: '/v1/nope',
      headers: { 'x-request-id': 'abc-123' },
    });
    expect(res.statusCode).toBe(404);
    const body = ErrorEnvelope.parse(res.json());
    expect(body.error).toMatchObject({ code: 'route_not_found', request_id: 'abc-123' });
  });

  it('serves the OpenAPI document', async () => {
    const res = await fx.app.inject({ method: 'GET', url: '/docs/openapi.json' });
    expect(res.json()).toMatchObject({ openapi: '3.1.0' });
  });

  it('healthz probes the real database and Redis, and answers 503 when one probe fails', async () => {
    const res = await fx.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(503);
    const body = ErrorEnvelope.parse(res.json());
    expect(body.error.code).toBe('service_unavailable');
    expect(body.error.details).toEqual({
      checks: { database: 'ok', redis: 'ok', search: 'error' },
    });
    expect(JSON.stringify(body)).not.toContain('secret detail');
  });
});
