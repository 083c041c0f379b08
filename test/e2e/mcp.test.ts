import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitFor, type Stack } from './support/stack.js';

const execFileAsync = promisify(execFile);

const ALL_TOOLS = [
  'screenshot',
  'observe',
  'act',
  'input',
  'verify',
  'shell',
  'files_read',
  'files_write',
  'files_list',
  'windows_list',
  'windows_launch',
  'wait_for',
  'request_handoff',
];

interface Structured {
  [key: string]: unknown;
}

/**
 * The claim's MCP endpoint, driven by the official TypeScript MCP client over real HTTP: the API
 * listens on loopback, the worker drives a real local desktop. The client lists the tools and
 * computes 6 × 7 in galculator by element tokens, reading the display back; MCP tokens are
 * refused once expired, revoked, used on another claim or after the claim ended.
 */
describe('MCP endpoint per claim', () => {
  let s: Stack;
  let base: string;
  let claimId: string;
  let sandboxId: string;
  const rest = (method: string, url: string, payload?: unknown, headers = s.auth) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers,
    });
  const mint = async (body: Record<string, unknown> = { ttl_seconds: 600 }, claim = claimId) => {
    const res = await rest('POST', `/v1/claims/${claim}/mcp-tokens`, body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; token: string; mcp_url: string; tools: string[] | null };
  };
  const connect = async (bearer: string, claim = claimId) => {
    const client = new Client({ name: 'cubicle-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/v1/claims/${claim}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${bearer}` } },
      }),
    );
    return client;
  };
  /** initialize as a raw POST: the refusals are HTTP answers with the error envelope. */
  const initialize = (bearer: string, claim = claimId) =>
    fetch(`${base}/v1/claims/${claim}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bearer}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    });
  const call = async (client: Client, name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError ?? false).toBe(false);
    return result as {
      structuredContent: Structured;
      content: { type: string; mimeType?: string; data?: string }[];
    };
  };
  const mcpErrorOf = async (promise: Promise<unknown>) => {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpError);
    return err as McpError & { data: { code: string; status: number } };
  };

  beforeAll(async () => {
    s = await startStack();
    base = await s.api.listen({ host: '127.0.0.1', port: 0 });
    const pool = await rest('PUT', '/v1/pools/mcp', {
      image: 'local',
      autoscaling: { min: 0, initial: 1, max: 1 },
    });
    expect(pool.statusCode, pool.body).toBe(201);
    await waitFor(
      async () => (await rest('GET', '/v1/pools/mcp')).json().counts.warm === 1,
      120_000,
      250,
    ).catch(async (err: Error) => {
      const sandboxes = await s.db.sandbox.findMany({
        select: { state: true, failureReason: true },
      });
      throw new Error(
        `${err.message}: ${JSON.stringify(sandboxes)}; worker: ${s.worker.output().slice(-3000)}`,
      );
    });
    const claim = await rest('POST', '/v1/pools/mcp/claims', { ttl_seconds: 900 });
    expect(claim.statusCode).toBe(201);
    claimId = claim.json().id;
    sandboxId = claim.json().sandbox.id;
  });
  afterAll(async () => s?.close());

  it('lists the tools and drives galculator by element tokens with an MCP token', async () => {
    const minted = await mint();
    expect(minted.mcp_url).toMatch(new RegExp(`/v1/claims/${claimId}/mcp$`));
    expect(minted.tools).toBeNull();
    const client = await connect(minted.token);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(ALL_TOOLS);
      for (const tool of tools) expect(tool.inputSchema.type).toBe('object');

      const launched = await call(client, 'windows_launch', {
        argv: ['galculator'],
        env: { HOME: `/tmp/mcp-galc-${sandboxId}` },
        wait_for_window_ms: 20_000,
      });
      const windowId = (launched.structuredContent.window as { window_id: number }).window_id;
      const ready = await call(client, 'wait_for', {
        until: 'element',
        window_id: windowId,
        selector: { role: 'toggle_button', name: '=' },
        timeout_ms: 10_000,
      });
      expect(ready.structuredContent.satisfied).toBe(true);

      const observed = await call(client, 'observe', { window_id: windowId });
      // The screenshot arrives as image content; the structured answer keeps only its mapping.
      expect(observed.content.some((c) => c.type === 'image')).toBe(true);
      expect(observed.structuredContent.screenshot).not.toHaveProperty('data');
      const rows = observed.structuredContent.elements as {
        element_token: string;
        role: string;
        name?: string;
      }[];
      const token = (name: string) =>
        rows.find((e) => e.role === 'toggle_button' && e.name === name)!.element_token;
      for (const key of ['6', '*', '7', '=']) {
        const acted = await call(client, 'act', {
          window_id: windowId,
          element_token: token(key),
          action: 'click',
        });
        // The ActionResult itself is the structured content.
        expect(acted.structuredContent).toHaveProperty('effect');
        expect(acted.structuredContent).toHaveProperty('retry_safe');
        expect(acted.structuredContent).toHaveProperty('evidence');
        expect(acted.structuredContent.effect).not.toBe('refused');
      }
      const answered = await call(client, 'wait_for', {
        until: 'text',
        window_id: windowId,
        text: '42',
        timeout_ms: 5_000,
      });
      expect(answered.structuredContent.satisfied).toBe(true);
      const verdict = await call(client, 'verify', {
        window_id: windowId,
        predicates: [
          { kind: 'element_exists', selector: { role: 'text', value: '42' }, unique: true },
        ],
        stable_samples: 2,
        timeout_ms: 5_000,
      });
      expect(verdict.structuredContent.status).toBe('satisfied');

      const shot = await call(client, 'screenshot', { max_dimension: 320 });
      const image = shot.content.find((c) => c.type === 'image')!;
      expect(image.mimeType).toBe('image/png');
      expect(Buffer.from(image.data!, 'base64').subarray(1, 4).toString()).toBe('PNG');
      expect(
        Math.max(shot.structuredContent.width as number, shot.structuredContent.height as number),
      ).toBeLessThanOrEqual(320);

      // The calls went where REST calls go: the claim's stored actions hold the MCP clicks.
      const stored = (await rest('GET', `/v1/claims/${claimId}/actions?limit=50`)).json().data as {
        operation: string;
      }[];
      expect(stored.filter((a) => a.operation === 'act.element').length).toBeGreaterThanOrEqual(4);

      const stable = await call(client, 'wait_for', {
        until: 'stable',
        stable_ms: 300,
        timeout_ms: 10_000,
      });
      expect(stable.structuredContent.satisfied).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('answers tool failures as MCP errors carrying the stable error code', async () => {
    const client = await connect((await mint()).token);
    try {
      const missing = await mcpErrorOf(
        client.callTool({
          name: 'act',
          arguments: { window_id: 999_999, element_token: 's1:1', action: 'click' },
        }),
      );
      expect(missing.data.code).toMatch(/^(window_not_found|stale_element_token|stale_snapshot)$/);
      const invalid = await mcpErrorOf(
        client.callTool({ name: 'act', arguments: { action: 'fly' } }),
      );
      expect(invalid.code).toBe(-32602);
      expect(invalid.data.code).toBe('validation_failed');
      const file = await mcpErrorOf(
        client.callTool({ name: 'files_read', arguments: { path: '/nonexistent/mcp-e2e' } }),
      );
      expect(file.data.code).toBe('not_found');
    } finally {
      await client.close();
    }
  });

  it('limits a token to its tools, and takes tenant API keys too', async () => {
    const limited = await mint({ ttl_seconds: 600, tools: ['windows_list', 'files_list'] });
    expect(limited.tools).toEqual(['windows_list', 'files_list']);
    const client = await connect(limited.token);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
        'files_list',
        'windows_list',
      ]);
      await call(client, 'windows_list', {});
      const refused = await mcpErrorOf(
        client.callTool({ name: 'shell', arguments: { argv: ['true'] } }),
      );
      expect(refused.data.code).toBe('forbidden');
    } finally {
      await client.close();
    }
    const keyed = await connect(s.auth.authorization.replace(/^Bearer /, ''));
    try {
      expect((await keyed.listTools()).tools).toHaveLength(ALL_TOOLS.length);
      const listed = await call(keyed, 'files_list', { path: '/tmp' });
      expect(listed.structuredContent).toHaveProperty('entries');
    } finally {
      await keyed.close();
    }
  });

  it('is listed by the MCP Inspector CLI, as a platform team would check it', async () => {
    const minted = await mint();
    // The official Inspector's CLI mode (no browser UI), run as a separate process over HTTP.
    const cli = createRequire(import.meta.url).resolve(
      '@modelcontextprotocol/inspector-cli/build/index.js',
    );
    const { stdout } = await execFileAsync(
      process.execPath,
      [
        cli,
        `${base}/v1/claims/${claimId}/mcp`,
        '--transport',
        'http',
        '--method',
        'tools/list',
        '--header',
        `Authorization: Bearer ${minted.token}`,
      ],
      // cwd is the CLI's own folder: it looks for its package.json relative to the cwd.
      { timeout: 60_000, cwd: dirname(cli) },
    );
    const listed = JSON.parse(stdout) as { tools: { name: string; inputSchema: object }[] };
    expect(listed.tools.map((t) => t.name).sort()).toEqual([...ALL_TOOLS].sort());
    expect(listed.tools.every((t) => typeof t.inputSchema === 'object')).toBe(true);
  });

  it('refuses expired and revoked tokens, other claims and other tenants', async () => {
    const good = await mint();
    expect((await initialize(good.token)).status).toBe(200);

    const short = await mint({ ttl_seconds: 1 });
    await new Promise((r) => setTimeout(r, 1_100));
    const expired = await initialize(short.token);
    expect(expired.status).toBe(401);
    expect(await expired.json()).toMatchObject({
      error: { code: 'unauthenticated', details: { state: 'expired' } },
    });

    const revokedToken = await mint();
    expect((await rest('DELETE', `/v1/mcp-tokens/${revokedToken.id}`)).statusCode).toBe(204);
    const revoked = await initialize(revokedToken.token);
    expect(revoked.status).toBe(401);
    expect(await revoked.json()).toMatchObject({ error: { details: { state: 'revoked' } } });
    const listed = (await rest('GET', `/v1/claims/${claimId}/mcp-tokens`)).json().data as {
      id: string;
      revoked_at: string | null;
    }[];
    expect(listed.find((t) => t.id === revokedToken.id)?.revoked_at).not.toBeNull();

    // A token names its claim: on any other claim's endpoint it is refused before any lookup.
    const otherClaim = 'clm_01jzzzzzzzzzzzzzzzzzzzzzzz';
    const elsewhere = await initialize(good.token, otherClaim);
    expect(elsewhere.status).toBe(403);
    expect(((await elsewhere.json()) as { error: { code: string } }).error.code).toBe('forbidden');

    // Another tenant's key sees no such claim; nor can it mint or revoke for it.
    const otherKey = s.other.auth.authorization.replace(/^Bearer /, '');
    const foreign = await initialize(otherKey);
    expect(foreign.status).toBe(404);
    expect(
      (await rest('POST', `/v1/claims/${claimId}/mcp-tokens`, {}, s.other.auth)).statusCode,
    ).toBe(404);
    expect(
      (await rest('DELETE', `/v1/mcp-tokens/${good.id}`, undefined, s.other.auth)).statusCode,
    ).toBe(404);

    const garbage = await initialize('not.a.token');
    expect(garbage.status).toBe(401);
    // A viewer ticket is signed by the same keys, and still is no MCP token.
    const ticket = await rest('POST', `/v1/claims/${claimId}/viewer-tickets`, { mode: 'control' });
    if (ticket.statusCode === 201)
      expect((await initialize(ticket.json().ticket)).status).toBe(401);

    expect((await fetch(`${base}/v1/claims/${claimId}/mcp`)).status).toBe(405);
  });

  it('hands the desktop to a human with request_handoff, and drives again after the return', async () => {
    const client = await connect((await mint()).token);
    try {
      const launched = await call(client, 'windows_launch', {
        argv: ['galculator'],
        env: { HOME: `/tmp/mcp-galc-${sandboxId}` },
        wait_for_window_ms: 20_000,
      });
      const windowId = (launched.structuredContent.window as { window_id: number }).window_id;
      const handoff = await call(client, 'request_handoff', {
        reason: 'a login needs 2FA',
        ttl_seconds: 120,
      });
      const handoffId = handoff.structuredContent.id as string;
      expect(handoff.structuredContent.state).toBe('active');
      expect(handoff.structuredContent.control).toMatchObject({ mode: 'control' });
      // While a human holds it, the agent's driving calls are refused with the handoff's code.
      const observed = await call(client, 'observe', {
        window_id: windowId,
        include_screenshot: false,
      });
      const button = (
        observed.structuredContent.elements as { element_token: string; role: string }[]
      ).find((e) => e.role === 'toggle_button')!;
      const refused = await mcpErrorOf(
        client.callTool({
          name: 'act',
          arguments: { window_id: windowId, element_token: button.element_token, action: 'click' },
        }),
      );
      expect(refused.data.code).toBe('handoff_active');
      const returned = await rest('POST', `/v1/claims/${claimId}/handoffs/${handoffId}/return`, {
        note: 'done',
      });
      expect(returned.statusCode, returned.body).toBeLessThan(300);
      const again = await call(client, 'observe', {
        window_id: windowId,
        include_screenshot: false,
      });
      const token = (
        again.structuredContent.elements as { element_token: string; role: string }[]
      ).find((e) => e.role === 'toggle_button')!.element_token;
      const acted = await call(client, 'act', {
        window_id: windowId,
        element_token: token,
        action: 'click',
      });
      expect(acted.structuredContent.effect).not.toBe('refused');
    } finally {
      await client.close();
    }
  });

  it('kills the tokens when the claim ends', async () => {
    const minted = await mint();
    expect((await initialize(minted.token)).status).toBe(200);
    expect((await rest('DELETE', `/v1/claims/${claimId}`)).statusCode).toBeLessThan(300);
    const ended = await initialize(minted.token);
    expect(ended.status).toBe(401);
    expect(await ended.json()).toMatchObject({ error: { details: { state: 'ended' } } });
  });
});
