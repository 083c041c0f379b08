import { ApiException, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createKubeClient, KubeApiError, toKubeApiError, type ApiOptions } from './client.js';

const kubeconfig = () => {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
};

const status = (code: number, reason: string, message: string) =>
  JSON.stringify({ kind: 'Status', code, reason, message });

describe('toKubeApiError', () => {
  it('keeps the Status code, reason, message and Retry-After, not the body or headers', () => {
    const err = toKubeApiError(
      'create Pod ns/p',
      new ApiException(
        429,
        'Unknown API Status Code!',
        status(429, 'TooManyRequests', 'slow down'),
        {
          'retry-after': '3',
          authorization: 'secret-header',
        },
      ),
    );
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err.status).toBe(429);
    expect(err.code).toBe(429);
    expect(err.reason).toBe('TooManyRequests');
    expect(err.retryAfterMs).toBe(3000);
    expect(err.message).toBe('create Pod ns/p: 429 TooManyRequests slow down');
    expect(err.message).not.toContain('secret-header');
  });

  it('an answer that is not a Status keeps its first characters', () => {
    const err = toKubeApiError('read x', new ApiException(502, 'x', 'bad gateway', {}));
    expect(err.message).toBe('read x: 502  bad gateway');
    expect(err.retryAfterMs).toBeNull();
  });
});

describe('KubeClient.call', () => {
  const client = createKubeClient(kubeconfig());
  const fail = (code: number, headers: Record<string, string> = {}) =>
    new ApiException(code, 'x', status(code, 'R', `failed ${code}`), headers);

  it('retries overload and server errors, then answers', async () => {
    let calls = 0;
    const value = await client.call('read x', async () => {
      calls++;
      if (calls === 1) throw fail(429, { 'retry-after': '0' });
      if (calls === 2) throw fail(503);
      return 'ok';
    });
    expect(value).toBe('ok');
    expect(calls).toBe(3);
  });

  it('does not retry a refusal (404, 409, 422) and says what failed', async () => {
    for (const code of [404, 409, 422]) {
      let calls = 0;
      const err = await client
        .call('read Pod ns/p', async () => {
          calls++;
          throw fail(code);
        })
        .catch((e: unknown) => e);
      expect(calls).toBe(1);
      expect(err).toMatchObject({
        status: code,
        message: `read Pod ns/p: ${code} R failed ${code}`,
      });
    }
  });

  it('gives up after its attempts', async () => {
    let calls = 0;
    const err = await client
      .call(
        'list x',
        async () => {
          calls++;
          throw new Error('ECONNREFUSED');
        },
        { attempts: 2 },
      )
      .catch((e: unknown) => e);
    expect(calls).toBe(2);
    expect((err as Error).message).toBe('ECONNREFUSED');
  });

  // The per-attempt options must carry the signal into the request the library sends.
  const requestOf = async (options: ApiOptions) => {
    let ctx = new RequestContext('https://127.0.0.1:1/api/v1/pods', 'GET' as never);
    for (const m of options.middleware ?? []) ctx = await m.pre(ctx).toPromise();
    return ctx;
  };

  // A request that never answers: it ends only when the signal it was given aborts.
  const hangUntilAborted = async (options: ApiOptions) => {
    const signal = (await requestOf(options)).getSignal()!;
    await new Promise((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener('abort', () => reject(signal.reason));
    });
  };

  it('times each attempt out and ends at once when the caller aborts', async () => {
    const started = Date.now();
    const err = await client
      .call('read slow', hangUntilAborted, { timeoutMs: 50, attempts: 1 })
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe('read slow: no answer within 50 ms');
    expect(Date.now() - started).toBeLessThan(1000);

    const ctl = new AbortController();
    const pending = client.call('read forever', hangUntilAborted, { signal: ctl.signal });
    ctl.abort(new Error('deadline'));
    await expect(pending).rejects.toThrow('deadline');
  });
});
