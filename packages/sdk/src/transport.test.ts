import { afterEach, describe, expect, it, vi } from 'vitest';
import { Cubicle } from './client.js';
import { DEFAULT_BASE_URL } from './transport.js';
import { SDK_VERSION } from './version.js';

// A recording `fetch` (the client's own `fetch` option) shows what would go on the wire.
function recorder() {
  const seen: { url: string; headers: Record<string, string> }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    seen.push({ url, headers: init.headers as Record<string, string> });
    return new Response(JSON.stringify({ version: 'x' }), {
      status: 200,
      headers: { 'content-type': 'application/json', 'x-request-id': 'req_1' },
    });
  }) as unknown as typeof globalThis.fetch;
  return { seen, fetch };
}

afterEach(() => vi.unstubAllEnvs());

describe('the client and its environment', () => {
  it('new Cubicle() takes key and URL from CUBICLE_API_KEY and CUBICLE_URL', async () => {
    vi.stubEnv('CUBICLE_API_KEY', 'cbk_from_env');
    vi.stubEnv('CUBICLE_URL', 'http://127.0.0.1:9999/');
    const { seen, fetch } = recorder();
    await new Cubicle({ fetch }).version();
    expect(seen[0]!.url).toBe('http://127.0.0.1:9999/v1/version');
    expect(seen[0]!.headers.authorization).toBe('Bearer cbk_from_env');
  });

  it('options win over the environment; apiKey null sends no credentials; default URL', async () => {
    vi.stubEnv('CUBICLE_API_KEY', 'cbk_from_env');
    vi.stubEnv('CUBICLE_URL', '');
    const { seen, fetch } = recorder();
    await new Cubicle({ fetch, apiKey: 'cbk_given' }).version();
    await new Cubicle({ fetch, apiKey: null }).version();
    expect(seen[0]!.url).toBe(`${DEFAULT_BASE_URL}/v1/version`);
    expect(seen[0]!.headers.authorization).toBe('Bearer cbk_given');
    expect(seen[1]!.headers.authorization).toBeUndefined();
  });

  it('sends a User-Agent with the SDK version', async () => {
    const { seen, fetch } = recorder();
    await new Cubicle({ fetch, apiKey: 'k', baseUrl: 'http://h' }).version();
    expect(seen[0]!.headers['user-agent']).toBe(`cubicle-typescript/${SDK_VERSION}`);
  });

  it('logs each attempt to a logger, without the key; CUBICLE_LOG=debug uses console.debug', async () => {
    const lines: string[] = [];
    const { fetch } = recorder();
    const logger = { debug: (m: string, f: object) => lines.push(`${m} ${JSON.stringify(f)}`) };
    const client = new Cubicle({ fetch, apiKey: 'cbk_secret', baseUrl: 'http://u:p@h', logger });
    await client.request('getUsage', { query: { from: 'a', to: 'b' } });
    await client.transport.call('introspectViewerTicket', { body: { ticket: 'vt_x' } as never });
    expect(lines[0]).toMatch(/^GET http:\/\/h\/v1\/usage\?from=a&to=b -> 200 \(\d+ ms\)/);
    expect(lines[0]).toContain('"requestId":"req_1"');
    expect(lines.join('\n')).not.toMatch(/cbk_secret|vt_x|u:p/);

    vi.stubEnv('CUBICLE_LOG', 'debug');
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    await new Cubicle({ fetch, apiKey: 'k', baseUrl: 'http://h' }).version();
    expect(debug).toHaveBeenCalledOnce();
    expect(String(debug.mock.calls[0]![0])).toMatch(
      /^\[cubicle\] GET http:\/\/h\/v1\/version -> 200/,
    );
    debug.mockRestore();
  });
});
