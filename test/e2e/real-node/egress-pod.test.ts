// Issue 32 on a real node: a desktop Pod run by kubelet + containerd + runc reaches the web only
// through the Kubernetes egress point. The point (apps/worker/dist/egress-point/main.js) runs on
// the node's bridge address — there is no Service here: the worker is given that address
// (KUBE_EGRESS_POINT_ADDRESS) instead of a Service name — and names the sandbox by the Pod IP its
// queries and connections come from (no NAT between the bridge and the host). From a shell in
// the Pod, with the proxy variables and resolv.conf the worker gave it: an allowlisted HTTPS site
// of the fake internet answers through the point, a denied one is refused and becomes an
// `egress.denied` webhook and a line on the claim. Not shown here: that a process ignoring the
// proxy is stopped by the NetworkPolicy — this node's CNI (`bridge`) enforces no policy; such a
// process is stopped here only because the Pods have no route off the bridge (checked too, and
// said so). No packet leaves this machine: the point asks only the fake DNS and may dial only the
// fake ranges.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { sandboxIdOfObjectName, sandboxObjectName } from '@cubicle/backends';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealNodeCluster, type RealNodeCluster } from '../../harness/kube/real-node/index.js';
import {
  FAKE_DNS,
  FAKE_RANGES,
  startFakeInternet,
  type FakeInternet,
} from '../../support/fake-internet/fake-internet.js';
import type { E2eBackend } from '../support/sandbox-backend.js';
import { startStack, waitFor, type Stack } from '../support/stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const POINT_MAIN = fileURLToPath(
  new URL('../../../apps/worker/dist/egress-point/main.js', import.meta.url),
);
const PROXY_PORT = 3128;
/** A stored secret bound to api.example.test: only the point and the fake server may see it. */
const TOKEN = `cub-rn-${randomBytes(12).toString('hex')}`;

/**
 * fetchIn is a Python script for the Pod's shell (urllib honours HTTPS_PROXY, as most clients
 * do): the page, or `refused: <why>`. Single-quoted for sh, so the code holds double quotes only.
 */
const fetchIn = (url: string, cafile = '/tmp/fake-ca.pem') =>
  `python3 -c '
import ssl, urllib.request
ctx = ssl.create_default_context(cafile="${cafile}")
try:
    print(urllib.request.urlopen(${JSON.stringify(url)}, context=ctx, timeout=10).read().decode())
except Exception as e:
    print("refused:", e)
'`;

describe('a desktop Pod on a real node reaches the web only through the egress point', () => {
  let rn: RealNodeCluster;
  let s: Stack;
  let internet: FakeInternet;
  let receiver: WebhookReceiver;
  let point: ChildProcess | undefined;
  let pointOutput = '';
  let namespace = '';
  let claimId = '';
  let sandboxId = '';
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: s.auth,
    });
  const shell = async (command: string) => {
    const res = await call('POST', `/v1/claims/${claimId}/shell`, { command, timeout_ms: 30_000 });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { stdout: string; stderr: string; exit_code: number | null };
  };
  const core = () => rn.cluster.kubeconfig.makeApiClient(CoreV1Api);

  beforeAll(async () => {
    internet = await startFakeInternet();
    rn = await startRealNodeCluster({ images: ['desktop-minimal'], log: console.log });
    namespace = await rn.cluster.createNamespace();
    const hostIp = rn.network.hostIp;
    const pods = async () =>
      (await core().listNamespacedPod({ namespace })).items.filter(
        (p) => !p.metadata?.deletionTimestamp,
      );
    const backend = async (): Promise<E2eBackend> => ({
      kind: 'kubernetes',
      workerEnv: {
        CUBICLE_BACKENDS: 'kubernetes',
        KUBECONFIG: rn.cluster.kubeconfigPath,
        KUBE_NAMESPACE: namespace,
        KUBE_IMAGE_PULL_POLICY: 'Never',
        KUBE_EGRESS_POINT_ADDRESS: hostIp,
        KUBE_EGRESS_POINT_PROXY_PORT: String(PROXY_PORT),
        KUBE_EGRESS_POINT_SELECTOR:
          'app.kubernetes.io/name=cubicle,app.kubernetes.io/component=egress',
      },
      pool: { image: rn.images['desktop-minimal']!.ref, backend: 'kubernetes' },
      liveSandboxIds: async () =>
        new Set(
          (await pods())
            .map((p) => sandboxIdOfObjectName(p.metadata!.name!))
            .filter((id): id is string => id !== null),
        ),
      loseSandbox: async (id) => {
        await core().deleteNamespacedPod({ name: sandboxObjectName(id), namespace });
      },
      plantOrphan: () => Promise.reject(new Error('not used here')),
      holds: async (id) => (await pods()).some((p) => p.metadata!.name === sandboxObjectName(id)),
      close: async () => undefined,
    });
    s = await startStack({ customBackend: backend });

    // The point on the bridge address: DNS on 53 (the Pods' resolv.conf names no port).
    point = spawn(process.execPath, [POINT_MAIN], {
      env: {
        PATH: process.env.PATH,
        LOG_LEVEL: 'warn',
        DATABASE_URL: s.workerEnv.DATABASE_URL,
        REDIS_URL: s.workerEnv.REDIS_URL!,
        QUEUE_PREFIX: s.workerEnv.QUEUE_PREFIX!,
        KUBECONFIG: rn.cluster.kubeconfigPath,
        KUBE_NAMESPACE: namespace,
        CUBICLE_EGRESS_POINT_HOST: hostIp,
        KUBE_EGRESS_POINT_DNS_PORT: '53',
        KUBE_EGRESS_POINT_PROXY_PORT: String(PROXY_PORT),
        CUBICLE_EGRESS_UPSTREAM_DNS: FAKE_DNS,
        CUBICLE_EGRESS_UPSTREAM_GUARD: FAKE_RANGES.join(','),
        // The keyring opens bound secrets and the egress CA's key (as the chart gives it); bound
        // hosts are verified upstream against the fake internet's CA.
        CUBICLE_KEYRING: s.workerEnv.CUBICLE_KEYRING!,
        CUBICLE_EGRESS_UPSTREAM_CA: internet.caPath,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    point.stdout!.on('data', (d: Buffer) => (pointOutput = (pointOutput + d).slice(-20_000)));
    point.stderr!.on('data', (d: Buffer) => (pointOutput = (pointOutput + d).slice(-20_000)));
    receiver = await startWebhookReceiver();
    const hook = await call('POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['egress.denied'],
    });
    expect(hook.statusCode, hook.body).toBe(201);

    const secret = await call('PUT', '/v1/secrets/API_TOKEN', {
      value: TOKEN,
      inject: { hosts: ['api.example.test'], header: 'Authorization', format: 'Bearer {value}' },
    });
    expect(secret.statusCode, secret.body).toBe(201);
    const put = await call('PUT', '/v1/pools/web', {
      ...s.backend.pool,
      cpu: 0.5,
      memory_mb: 1024,
      autoscaling: { min: 0, initial: 1, max: 1 },
      egress: { mode: 'allowlist', allow: ['allowed.example.test', 'api.example.test'], deny: [] },
    });
    expect(put.statusCode, put.body).toBe(201);
    await waitFor(
      async () => {
        if (point!.exitCode !== null) throw new Error(`the point exited: ${pointOutput}`);
        return (await call('GET', '/v1/pools/web')).json().counts.warm === 1;
      },
      240_000,
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; worker: ${s.worker.output().slice(-3000)}`);
    });
    const claim = await call('POST', '/v1/pools/web/claims', { ttl_seconds: 900 });
    expect(claim.statusCode, claim.body).toBe(201);
    claimId = claim.json().id;
    sandboxId = claim.json().sandbox.id;
    // The fake internet's CA, for the Pod's client to verify the sites (not a secret).
    const ca = Buffer.from(internet.caPem).toString('base64');
    expect((await shell(`echo ${ca} | base64 -d > /tmp/fake-ca.pem && echo ok`)).stdout).toContain(
      'ok',
    );
  }, 600_000);
  afterAll(async () => {
    if (point && point.exitCode === null) {
      point.kill('SIGTERM');
      await once(point, 'exit');
    }
    await s?.close();
    await rn?.stop();
    await receiver?.close();
    await internet?.stop();
  }, 180_000);

  it('the Pod resolves through the point and has it as its proxy', async () => {
    const pod = await core().readNamespacedPod({ name: sandboxObjectName(sandboxId), namespace });
    expect(pod.spec?.dnsPolicy).toBe('None');
    const resolv = (await shell('cat /etc/resolv.conf')).stdout;
    expect(resolv).toContain(`nameserver ${rn.network.hostIp}`);
    expect((await shell('echo "$HTTPS_PROXY"')).stdout.trim()).toBe(
      `http://${rn.network.hostIp}:${PROXY_PORT}`,
    );
    const lookup = await shell(
      `python3 -c "import socket\nfor n in ('allowed.example.test','denied.example.test'):\n try: print(n, socket.gethostbyname(n))\n except Exception as e: print(n, 'none')"`,
    );
    expect(lookup.stdout).toContain('allowed.example.test 198.51.100.10');
    expect(lookup.stdout).toContain('denied.example.test none');
  });

  it('reaches an allowed site through the point; a denied one is refused and reported', async () => {
    const allowed = await shell(fetchIn('https://allowed.example.test/'));
    expect(allowed.stdout, allowed.stderr).toContain('"host":"allowed.example.test"');
    const denied = await shell(fetchIn('https://other.example.test/'));
    expect(denied.stdout).toMatch(/^refused: .*403/);
    const hooks = await receiver.waitFor(
      1,
      (w) =>
        w.payload.type === 'egress.denied' &&
        (w.payload.data as { name?: string }).name === 'other.example.test',
      15_000,
    );
    expect(hooks[0]!.payload.data).toMatchObject({
      protocol: 'tcp',
      port: 443,
      rule: 'default:allowlist',
    });
    const page = (await call('GET', `/v1/claims/${claimId}/egress-events`)).json();
    expect(page.data.some((e: { name: string }) => e.name === 'other.example.test')).toBe(true);
  });

  it('a process ignoring the proxy reaches nothing (here for want of a route, not a policy)', async () => {
    const raw = await shell(
      `python3 -c "import socket\ntry:\n socket.create_connection(('198.51.100.10', 443), timeout=3); print('open')\nexcept Exception as e: print('refused', e)"`,
    );
    expect(raw.stdout).toMatch(/^refused/);
  });

  it('a credential bound to a host is added at the point; the Pod trusts the egress CA and never holds the value', async () => {
    // The Pod's own trust files (from its guest Secret): the system bundle with the CA, the CA
    // alone for Node; a client reading the system bundle accepts the point's certificate.
    const trust = await shell(
      'grep -c "BEGIN CERTIFICATE" /etc/ssl/certs/ca-certificates.crt; head -1 /run/cubicle/egress-ca.pem; echo "$NODE_EXTRA_CA_CERTS"',
    );
    expect(trust.stdout).toContain('-----BEGIN CERTIFICATE-----');
    expect(trust.stdout).toContain('/run/cubicle/egress-ca.pem');
    const seen = () =>
      internet.seen.filter((r) => r.host === 'api.example.test' && r.path === '/echo-headers');
    let bound = { stdout: '', stderr: '' };
    await waitFor(
      async () => {
        bound = await shell(
          fetchIn('https://api.example.test/echo-headers', '/etc/ssl/certs/ca-certificates.crt'),
        );
        return seen().at(-1)?.headers.authorization === `Bearer ${TOKEN}`;
      },
      30_000,
      500,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(bound)}; point: ${pointOutput}`);
    });
    expect(bound.stdout).toContain('authorization');
    // Nowhere in the Pod: its environment, every process's environment and command line, its
    // writable files and trust files; a decoy of the same shape shows the search finds one.
    const decoy = `cub-rn-${'0'.repeat(24)}`;
    const search = await shell(
      `echo ${decoy} > /tmp/decoy; { env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; grep -rsa . /tmp /home /run /etc/ssl/certs/ca-certificates.crt; } 2>/dev/null | grep -ao 'cub-rn-[0-9a-f]*' | sort -u`,
    );
    expect(search.stdout.split('\n')).toContain(decoy);
    expect(search.stdout).not.toContain(TOKEN);
    expect(pointOutput).not.toContain(TOKEN);
    expect(s.worker.output()).not.toContain(TOKEN);
  });
});
