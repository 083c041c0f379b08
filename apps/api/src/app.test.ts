import { defineRoute } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { route } from './lib/define-handler.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const Echo = defineRoute({
  operationId: 'echo',
  method: 'POST',
  path: '/test/echo/{id}',
  tag: 'test',
  auth: 'none',
  summary: 'echo',
  params: z.strictObject({ id: z.string().regex(/^e_[a-z]+$/) }),
  body: z.strictObject({ n: z.number().int() }),
  responses: { 200: z.strictObject({ id: z.string(), n: z.number() }) },
  errors: ['validation_failed'],
  // route() applies the limit the contract gives the route, whatever the server's default.
  bodyLimit: 1024,
});

// buildApp itself needs Postgres and Redis: its envelope and system routes are tested in
// apps/api/test/system-routes.test.ts.
describe('route helper', () => {
  async function echoApp(handler: (n: number) => unknown) {
    const { default: Fastify } = await import('fastify');
    const { registerErrorHandler } = await import('@cubicle/http');
    const { registerJsonBody } = await import('@cubicle/http');
    const a = Fastify({ bodyLimit: 64 * 1024 * 1024 });
    registerErrorHandler(a);
    registerJsonBody(a);
    route(a, Echo, ({ params, body }) => {
      const out = handler(body.n);
      return {
        status: 200 as const,
        body: (out ?? { id: params.id, n: body.n }) as { id: string; n: number },
      };
    });
    await a.ready();
    return a;
  }

  it('validates path, body and rejects unknown fields with stable codes', async () => {
    app = await echoApp(() => undefined);
    const ok = await app.inject({ method: 'POST', url: '/test/echo/e_abc', payload: { n: 3 } });
    expect(ok.json()).toEqual({ id: 'e_abc', n: 3 });

    const badId = await app.inject({ method: 'POST', url: '/test/echo/DROP', payload: { n: 3 } });
    expect(badId.statusCode).toBe(400);
    expect(badId.json().error.code).toBe('invalid_id');

    const extra = await app.inject({
      method: 'POST',
      url: '/test/echo/e_abc',
      payload: { n: 3, x: 1 },
    });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().error).toMatchObject({ code: 'validation_failed' });
    expect(extra.json().error.details.issues[0]).toMatchObject({ location: 'body' });

    const wrongType = await app.inject({
      method: 'POST',
      url: '/test/echo/e_abc',
      payload: { n: 'three' },
    });
    expect(wrongType.json().error.details.issues[0]).toMatchObject({ location: 'body', path: 'n' });

    const badJson = await app.inject({
      method: 'POST',
      url: '/test/echo/e_abc',
      headers: { 'content-type': 'application/json' },
      payload: '{"n":',
    });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json().error.code).toBe('invalid_json');

    // An empty JSON body is no body (a DELETE with a content-type header, say), not bad JSON.
    const empty = await app.inject({
      method: 'POST',
      url: '/test/echo/e_abc',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(empty.json().error.code).toBe('validation_failed');

    const text = await app.inject({
      method: 'POST',
      url: '/test/echo/e_abc',
      headers: { 'content-type': 'text/csv' },
      payload: 'n,1',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().error.code).toBe('unsupported_media_type');
  });

  it('maps AppError to its status and hides internal errors', async () => {
    app = await echoApp((n) => {
      if (n === 1) throw new AppError('quota_exceeded', 'too many', { limit: 1 });
      if (n === 2) throw new Error('database password is hunter2');
      return { id: 'x', n: 'not a number' };
    });
    const quota = await app.inject({ method: 'POST', url: '/test/echo/e_a', payload: { n: 1 } });
    expect(quota.statusCode).toBe(429);
    expect(quota.json().error).toMatchObject({ code: 'quota_exceeded', details: { limit: 1 } });

    const boom = await app.inject({ method: 'POST', url: '/test/echo/e_a', payload: { n: 2 } });
    expect(boom.statusCode).toBe(500);
    expect(boom.json().error).toMatchObject({ code: 'internal_error', message: 'internal error' });
    expect(boom.body).not.toContain('hunter2');

    // A handler answering outside its response schema is a server bug, never leaked as data.
    const off = await app.inject({ method: 'POST', url: '/test/echo/e_a', payload: { n: 3 } });
    expect(off.statusCode).toBe(500);
  });

  it('rejects bodies over the limit with payload_too_large', async () => {
    app = await echoApp(() => undefined);
    const res = await app.inject({
      method: 'POST',
      url: '/test/echo/e_a',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ n: 1, pad: 'y'.repeat(5000) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('payload_too_large');
  });
});
