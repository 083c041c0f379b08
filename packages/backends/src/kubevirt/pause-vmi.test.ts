import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClient, type KubeClient } from '../kube/client.js';
import { sandboxObjectName } from '../kube/names.js';
import { setVmiPaused, vmiSubresourcePath } from './pause-vmi.js';

// The test cluster has a real kube-apiserver but no KubeVirt (its subresource API is served by
// virt-api), so what can be checked here is the request the backend sends: a loopback server
// records it and answers as virt-api does (202 without a body, or 409 for the state already held).
const seen: { method: string; path: string; body: string }[] = [];
let answer: { status: number; body: string } = { status: 202, body: '' };
const server = createServer((req: IncomingMessage, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    seen.push({ method: req.method!, path: req.url!, body });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  });
});
let client: KubeClient;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        skipTLSVerify: true,
      },
    ],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  client = createKubeClient(kc);
});
afterAll(() => {
  client.close();
  server.close();
});

const sandboxId = 'sbx_0123456789abcdefghjkmnpqrs';

describe('setVmiPaused', () => {
  it("PUTs {} to the VMI's pause and unpause subresources", async () => {
    seen.length = 0;
    answer = { status: 202, body: '' };
    await setVmiPaused(client, 'cubicle', sandboxId, true);
    await setVmiPaused(client, 'cubicle', sandboxId, false);
    const name = sandboxObjectName(sandboxId);
    expect(seen.map((r) => [r.method, r.path, JSON.parse(r.body)])).toEqual([
      ['PUT', vmiSubresourcePath('cubicle', name, 'pause'), {}],
      ['PUT', vmiSubresourcePath('cubicle', name, 'unpause'), {}],
    ]);
    expect(seen[0]!.path).toBe(
      `/apis/subresources.kubevirt.io/v1/namespaces/cubicle/virtualmachineinstances/${name}/pause`,
    );
  });

  it('takes 409 "already paused" as done, and throws other refusals', async () => {
    const status = (message: string) =>
      JSON.stringify({ kind: 'Status', code: 409, reason: 'Conflict', message });
    answer = { status: 409, body: status('VMI is already paused') };
    await expect(setVmiPaused(client, 'cubicle', sandboxId, true)).resolves.toBeUndefined();
    answer = { status: 409, body: status('VMI is not running') };
    await expect(setVmiPaused(client, 'cubicle', sandboxId, true)).rejects.toThrow(/not running/);
  });

  it('says not_supported_by_backend when the subresource API answers 404 (no virt-api)', async () => {
    answer = {
      status: 404,
      body: JSON.stringify({
        kind: 'Status',
        code: 404,
        reason: 'NotFound',
        message: 'the server could not find the requested resource',
      }),
    };
    await expect(setVmiPaused(client, 'cubicle', sandboxId, true)).rejects.toMatchObject({
      code: 'not_supported_by_backend',
      details: { backend: 'kubevirt' },
    });
  });
});
