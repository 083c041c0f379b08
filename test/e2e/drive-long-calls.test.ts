import type { AddressInfo } from 'node:net';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitFor, type Stack } from './support/stack.js';

interface Answer {
  status: number;
  body: string;
  ms: number;
}

/**
 * post sends one request over a real loopback socket (not inject: the server's socket timeouts
 * are what is under test) and resolves with the status, or rejects when the socket is cut.
 */
function post(url: string, headers: Record<string, string>, body: unknown): Promise<Answer> {
  const started = Date.now();
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(payload)),
        },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: text, ms: Date.now() - started }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', (err) =>
      reject(new Error(`cut after ${Date.now() - started} ms without an answer: ${err.message}`)),
    );
    req.end(payload);
  });
}

/**
 * Guest calls that wait longer than the old 30 s socket timeout keep their answer: the API's
 * HTTP timeouts derive from the guest-call bounds. Over a real listener on loopback.
 */
describe('drive calls longer than 30 s', () => {
  let s: Stack;
  let base: string;
  let claimId: string;

  beforeAll(async () => {
    s = await startStack();
    await s.api.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(s.api.server.address() as AddressInfo).port}`;
    const put = await s.api.inject({
      method: 'PUT',
      url: '/v1/pools/long',
      headers: s.auth,
      payload: { image: 'local', autoscaling: { min: 0, initial: 1, max: 2 } },
    });
    expect(put.statusCode).toBe(201);
    const claim = await post(`${base}/v1/pools/long/claims`, s.auth, {
      ttl_seconds: 900,
      wait_seconds: 120,
    });
    expect(claim.status, claim.body).toBe(201);
    claimId = JSON.parse(claim.body).id;
  });
  afterAll(async () => s?.close());

  it('answers a 45 s shell call with its result', async () => {
    const answer = await post(`${base}/v1/claims/${claimId}/shell`, s.auth, {
      command: 'sleep 45; echo done',
      timeout_ms: 60_000,
    });
    expect(answer.status, answer.body).toBe(200);
    expect(JSON.parse(answer.body).stdout).toContain('done');
    expect(answer.ms).toBeGreaterThanOrEqual(45_000);
  });

  it('answers 504 timeout when the worker dies mid-call', async () => {
    // Bound: timeout_ms + 5 s margin + 1 s slack = 46 s, past the old 30 s cut.
    const pending = post(`${base}/v1/claims/${claimId}/shell`, s.auth, {
      command: 'sleep 38; echo late',
      timeout_ms: 40_000,
    });
    // Kill the worker once the call runs in the guest (the sleep is visible in the job's life).
    await new Promise((r) => setTimeout(r, 3_000));
    await s.worker.kill9();
    const answer = await pending;
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.body).error.code).toBe('timeout');
    expect(answer.ms).toBeGreaterThan(40_000);
    await s.restartWorker();
    // The stack can still drive the desktop after the restart.
    await waitFor(
      async () =>
        (
          await post(`${base}/v1/claims/${claimId}/shell`, s.auth, {
            command: 'echo back',
            timeout_ms: 5_000,
          })
        ).status === 200,
      60_000,
      1_000,
    );
  });
});
