import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { drainRequestBody, type DrainBounds } from './drain-request.js';

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** drainOn starts a server that drains each request with `bounds` and reports the result. */
async function drainOn(bounds: DrainBounds) {
  const results: { isWhole: boolean; ms: number }[] = [];
  server = http.createServer((req, res) => {
    const started = Date.now();
    void drainRequestBody(req, bounds).then((isWhole) => {
      results.push({ isWhole, ms: Date.now() - started });
      res.end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, results };
}

/** send posts `chunks` (then ends, unless `hold`) and resolves when the answer comes. */
function send(port: number, chunks: Buffer[], hold = false) {
  return new Promise<void>((resolve) => {
    const req = http.request({ port, host: '127.0.0.1', method: 'POST', agent: false }, (res) => {
      res.resume();
      res.on('end', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', () => resolve());
    for (const chunk of chunks) req.write(chunk);
    if (!hold) req.end();
  });
}

describe('drainRequestBody', () => {
  it('reads a whole body and says so', async () => {
    const { port, results } = await drainOn({ maxBytes: 1024 * 1024, maxMs: 5_000 });
    await send(port, [Buffer.alloc(300_000), Buffer.alloc(300_000)]);
    expect(results).toEqual([{ isWhole: true, ms: expect.any(Number) }]);
  });

  it('gives up past maxBytes', async () => {
    const { port, results } = await drainOn({ maxBytes: 64 * 1024, maxMs: 5_000 });
    await send(port, [Buffer.alloc(1024 * 1024)]);
    expect(results[0]?.isWhole).toBe(false);
  });

  it('gives up after maxMs when the client stops sending', async () => {
    const { port, results } = await drainOn({ maxBytes: 1024 * 1024, maxMs: 200 });
    await send(port, [Buffer.alloc(10)], true);
    expect(results[0]?.isWhole).toBe(false);
    expect(results[0]?.ms).toBeGreaterThanOrEqual(190);
  });
});
