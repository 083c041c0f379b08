import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { UPLOAD_WAYS, uploadOverLimit } from '../../../test/harness/upload-over-limit.js';
import { createServer } from './create-server.js';
import { registerJsonBody } from './json-body.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function echoServer() {
  app = createServer({ logger: false, bodyLimit: 64 * 1024 });
  registerJsonBody(app);
  app.post('/echo', async (request) => ({ got: request.body }));
  app.get('/id', async (request) => ({ id: request.id }));
  await app.ready();
  return app;
}

describe('createServer', () => {
  it("keeps the caller's request id when it looks like one and answers with it", async () => {
    const server = await echoServer();
    const kept = await server.inject({ url: '/id', headers: { 'x-request-id': 'worker:job-7.1' } });
    expect(kept.json()).toEqual({ id: 'worker:job-7.1' });
    expect(kept.headers['x-request-id']).toBe('worker:job-7.1');

    const replaced = await server.inject({ url: '/id', headers: { 'x-request-id': 'a b\u0000' } });
    expect(replaced.json().id).toMatch(/^req_[0-9a-f-]{36}$/);
    expect(replaced.headers['x-request-id']).toBe(replaced.json().id);
  });

  it('answers failures with the envelope, its request id included', async () => {
    const server = await echoServer();
    const res = await server.inject({ url: '/nowhere', headers: { 'x-request-id': 'r-1' } });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatchObject({ code: 'route_not_found', request_id: 'r-1' });
    expect(res.headers['x-request-id']).toBe('r-1');
  });

  // The answer is decided on the first bytes (or on Content-Length alone) while the client is
  // still sending; closing then would reset the connection under the client (EPIPE, no 413).
  it.each(UPLOAD_WAYS)('a body over the limit is a 413 on the wire: %s', async (_name, how) => {
    const server = await echoServer();
    const url = await server.listen({ host: '127.0.0.1', port: 0 });
    const outcomes = await uploadOverLimit({
      url: `${url}/echo`,
      bytes: 4 * 1024 * 1024,
      tries: 8,
      ...how,
    });
    expect(outcomes).toEqual(
      Array.from({ length: 8 }, () => ({ status: 413, code: 'payload_too_large' })),
    );
  });
});
