// Issue 32 on Kubernetes: the chart's egress point against the real kube-apiserver of the test
// cluster, with the real API, worker and point processes. The chart is rendered with
// `sandboxes.egress.mode: point`; its egress objects pass a strict server-side dry run and its
// Service is created, so the worker points every sandbox Pod at that Service (dnsPolicy None,
// HTTP(S)_PROXY) and applies a NetworkPolicy that admits only the point's Pods. The point itself
// (apps/worker/dist/egress-point/main.js, the Deployment's args), with a token of the chart's
// ServiceAccount for it, names each sandbox by its Pod IP through its Pod informer. The test node agent runs desktops without a network of their own,
// so a Pod's traffic is sent from the Pod's IP by this test (as a CNI would deliver it): an
// allowed name is reached through the point, a denied one is refused and becomes one
// `egress.denied` line and webhook, the pool's one-step allow reaches the running claim, a pool
// without egress reaches nothing, an address that is no sandbox's Pod gets nothing, and a secret
// bound to a host is added as a header by the point (TLS terminated with the installation CA the
// Pod's guest Secret carries; other hosts spliced; the value in no Pod, Secret, log or event). No
// CNI runs here: nothing enforces the NetworkPolicy (see packages/egress/README.md). No packet
// leaves this machine: the point asks only the fake DNS and may dial only the fake ranges.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { Resolver } from 'node:dns/promises';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, NetworkingV1Api, type V1Pod } from '@kubernetes/client-node';
import { NETWORK_POLICY_NAME, sandboxObjectName } from '@cubicle/backends';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  discoverResources,
  rawClient,
  strictDryRun,
  createObject,
} from '../harness/kube/dry-run.js';
import { helm, parseManifests } from '../harness/kube/helm.js';
import { writeKubeconfigFile } from '../harness/kube/kubeconfig.js';
import type { KubeObject } from '../harness/kube/dry-run.js';
import { startFakeInternet, type FakeInternet } from '../support/fake-internet/fake-internet.js';
import {
  startEgressPointProcess,
  type EgressPointProcess,
} from './support/egress-point-process.js';
import { startStack, waitFor, type Stack } from './support/stack.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const CHART = fileURLToPath(new URL('../../helm/cubicle', import.meta.url));

const freePort = async () => {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
};

/** A proxy answer: the CONNECT's (or request's) status and rule, and the body through it. */
interface Through {
  status: number;
  rule: string | null;
  body: string;
  /** The common name of the TLS certificate's issuer seen through a CONNECT tunnel. */
  issuer?: string;
}

describe('egress of Kubernetes sandbox Pods through the chart’s egress point', () => {
  let s: Stack;
  let internet: FakeInternet;
  let receiver: WebhookReceiver;
  let point: EgressPointProcess | undefined;
  let namespace = '';
  let serviceIp = '';
  const ports = { dns: 0, proxy: 0 };
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: s.auth,
    });
  const core = () => s.backend.cluster!.kubeconfig.makeApiClient(CoreV1Api);

  /** rendered is the chart with the point on, its namespaces the test's. */
  const rendered = () => {
    const out = helm([
      'template',
      'r',
      CHART,
      '-n',
      namespace,
      '--kube-version',
      '1.36.5',
      '-f',
      `${CHART}/ci/default-values.yaml`,
      '--set',
      'sandboxes.egress.mode=point',
      '--set',
      `sandboxes.namespace=${namespace}`,
      '--set',
      'sandboxes.createNamespace=false',
    ]);
    expect(out.code, out.stderr).toBe(0);
    return parseManifests(out.stdout);
  };

  /** claimIn makes a pool (with `egress` when given), waits for a warm Pod, claims it. */
  const claimIn = async (name: string, egress: unknown) => {
    const put = await call('PUT', `/v1/pools/${name}`, {
      ...s.backend.pool,
      autoscaling: { min: 0, initial: 1, max: 2 },
      ...(egress === undefined ? {} : { egress }),
    });
    expect(put.statusCode, put.body).toBe(201);
    await waitFor(
      async () => (await call('GET', `/v1/pools/${name}`)).json().counts.warm === 1,
      120_000,
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; worker: ${s.worker.output().slice(-3000)}`);
    });
    const claim = await call('POST', `/v1/pools/${name}/claims`, { ttl_seconds: 900 });
    expect(claim.statusCode, claim.body).toBe(201);
    const claimId = claim.json().id as string;
    const sandbox = await s.db.claim.findUniqueOrThrow({ where: { id: claimId } });
    const pod = await core().readNamespacedPod({
      name: sandboxObjectName(sandbox.sandboxId!),
      namespace,
    });
    return { claimId, pod, podIp: pod.status!.podIP! };
  };

  /**
   * connectThrough opens CONNECT host:port from `from` and, once tunnelled, speaks HTTPS as `sni`
   * (GET `path`, trusting `ca`: the fake internet's CA unless told), noting the certificate's
   * issuer.
   */
  const connectThrough = (
    from: string,
    target: string,
    sni: string,
    { ca = internet.caPem, path = '/' }: { ca?: string; path?: string } = {},
  ): Promise<Through> =>
    new Promise((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port: ports.proxy,
        method: 'CONNECT',
        path: target,
        localAddress: from,
      });
      req.on('error', reject);
      req.on('connect', (res: IncomingMessage, socket: Socket) => {
        const rule = (res.headers['x-cubicle-egress-rule'] as string | undefined) ?? null;
        if (res.statusCode !== 200) {
          socket.destroy();
          return resolve({ status: res.statusCode ?? 0, rule, body: '' });
        }
        const tls = tlsConnect({ socket, servername: sni, ca });
        let body = '';
        let issuer: string | undefined;
        tls.on('secureConnect', () => {
          issuer = String(tls.getPeerCertificate().issuer?.CN ?? '');
          tls.write(`GET ${path} HTTP/1.1\r\nhost: ${sni}\r\nconnection: close\r\n\r\n`);
        });
        tls.on('data', (d: Buffer) => (body += d.toString()));
        tls.on('end', () => resolve({ status: 200, rule: null, body, ...(issuer && { issuer }) }));
        tls.on('error', (err) => resolve({ status: 200, rule: null, body: `tls: ${err.message}` }));
      });
      req.end();
    });

  /** getThrough sends an absolute-form HTTP request through the point from `from`. */
  const getThrough = (from: string, url: string): Promise<Through> =>
    new Promise((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port: ports.proxy,
        path: url,
        headers: { host: new URL(url).host },
        localAddress: from,
        agent: false,
      });
      req.on('error', reject);
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            rule: (res.headers['x-cubicle-egress-rule'] as string | undefined) ?? null,
            body,
          }),
        );
      });
      req.end();
    });

  /** resolveFrom asks the point's resolver for `name` from the address `from`. */
  const resolveFrom = async (from: string, name: string) => {
    const resolver = new Resolver({ timeout: 3000, tries: 1 });
    resolver.setLocalAddress(from);
    resolver.setServers([`127.0.0.1:${ports.dns}`]);
    return resolver.resolve4(name).catch((err: NodeJS.ErrnoException) => err.code ?? 'error');
  };

  beforeAll(async () => {
    internet = await startFakeInternet();
    s = await startStack({ backend: 'kubernetes' });
    namespace = s.workerEnv.KUBE_NAMESPACE!;
    const cluster = s.backend.cluster!;
    // The chart's egress objects: valid for the API server as rendered, then the Service for real.
    const objects = rendered();
    const egress = objects.filter(
      (o) =>
        (o.metadata.labels as Record<string, string> | undefined)?.[
          'app.kubernetes.io/component'
        ] === 'egress',
    );
    expect(egress.map((o) => o.kind).sort()).toEqual([
      'Deployment',
      'Role',
      'Role',
      'RoleBinding',
      'RoleBinding',
      'Service',
      'ServiceAccount',
    ]);
    const raw = rawClient(cluster);
    const index = await discoverResources(raw);
    for (const obj of egress) {
      const dry = await strictDryRun(raw, index, obj, namespace);
      expect(dry.status, `${obj.kind} ${obj.metadata.name}: ${dry.body}`).toBeLessThan(300);
    }
    // The Deployment runs the entry this test runs (the worker image's checkout path).
    const deployment = egress.find((o) => o.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    };
    expect(deployment.spec.template.spec.containers[0]!.args).toEqual([
      'node',
      '/opt/cubicle/apps/worker/dist/egress-point/main.js',
    ]);
    // Everything but the Deployment for real (no controller runs its Pods here).
    for (const obj of egress.filter((o) => o.kind !== 'Deployment')) {
      const created = await createObject(raw, index, obj, namespace);
      expect(created.status, `${obj.kind} ${obj.metadata.name}: ${created.body}`).toBe(201);
      if (obj.kind === 'Service')
        serviceIp = (created.json as { spec: { clusterIP: string } }).spec.clusterIP;
    }
    // The point runs with its own account's token, as the kubelet would mount it: the chart's
    // Role must be enough for its Pod informer, and it may read no Secret.
    const tokenAnswer = await raw.request(
      'POST',
      `/api/v1/namespaces/${namespace}/serviceaccounts/r-cubicle-egress/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
    );
    expect(tokenAnswer.status, tokenAnswer.body).toBe(201);
    const token = (tokenAnswer.json as { status: { token: string } }).status.token;
    const asPoint = rawClient(cluster, token);
    expect((await asPoint.request('GET', `/api/v1/namespaces/${namespace}/pods`)).status).toBe(200);
    expect((await asPoint.request('GET', `/api/v1/namespaces/${namespace}/secrets`)).status).toBe(
      403,
    );
    const pointKubeconfig = join(cluster.dir, 'egress-point-kubeconfig');
    writeKubeconfigFile(
      pointKubeconfig,
      cluster.server,
      token,
      readFileSync(join(cluster.dir, 'certs', 'apiserver.crt'), 'utf8'),
    );
    // The worker gets the chart's own variables for the point.
    const worker = objects.find(
      (o): o is KubeObject => o.kind === 'Deployment' && o.metadata.name === 'r-cubicle-worker',
    )!;
    const env = (
      worker as unknown as {
        spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
      }
    ).spec.template.spec.containers[0]!.env;
    for (const e of env)
      if (e.name.startsWith('KUBE_EGRESS_POINT_') && e.value !== undefined)
        s.workerEnv[e.name] = e.value;
    expect(s.workerEnv.KUBE_EGRESS_POINT_SERVICE).toBe('r-cubicle-egress');
    await s.restartWorker();

    ports.dns = await freePort();
    ports.proxy = await freePort();
    point = startEgressPointProcess({
      stack: s,
      internet,
      kubeconfigPath: pointKubeconfig,
      namespace,
      host: '127.0.0.1',
      dnsPort: ports.dns,
      proxyPort: ports.proxy,
    });
    await waitFor(
      async () => {
        point!.assertRunning();
        const answer = await getThrough('127.0.0.1', 'http://allowed.example.test/').catch(
          () => null, // not listening yet
        );
        return answer?.status === 403;
      },
      60_000,
      200,
    );
    receiver = await startWebhookReceiver();
    const hook = await call('POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['egress.denied'],
    });
    expect(hook.statusCode, hook.body).toBe(201);
  });
  afterAll(async () => {
    await point?.stop();
    await s?.close();
    await receiver?.close();
    await internet?.stop();
  });

  it('points the sandbox Pod at the point, and the policy admits only the point', async () => {
    const { pod } = await claimIn('objects', undefined);
    const spec = (pod as V1Pod).spec!;
    expect(spec.dnsPolicy).toBe('None');
    expect(spec.dnsConfig?.nameservers).toEqual([serviceIp]);
    const env = Object.fromEntries(spec.containers[0]!.env!.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      HTTPS_PROXY: `http://${serviceIp}:3128`,
      http_proxy: `http://${serviceIp}:3128`,
    });
    const policy = await s.backend
      .cluster!.kubeconfig.makeApiClient(NetworkingV1Api)
      .readNamespacedNetworkPolicy({ name: NETWORK_POLICY_NAME, namespace });
    expect(policy.spec?.egress).toHaveLength(1);
    expect(policy.spec?.egress?.[0]?.to).toEqual([
      {
        podSelector: {
          matchLabels: {
            'app.kubernetes.io/name': 'cubicle',
            'app.kubernetes.io/instance': 'r',
            'app.kubernetes.io/component': 'egress',
          },
        },
      },
    ]);
    expect(policy.spec?.egress?.[0]?.ports?.map((p) => `${p.protocol}/${p.port}`).sort()).toEqual([
      'TCP/3128',
      'TCP/53',
      'TCP/5353',
      'UDP/53',
      'UDP/5353',
    ]);
  });

  it('an allowlisted Pod reaches its names through the point; a denial is one event and one webhook; one PUT allows it', async () => {
    const { claimId, podIp } = await claimIn('web', {
      mode: 'allowlist',
      allow: ['allowed.example.test'],
      deny: [],
    });
    expect(await resolveFrom(podIp, 'allowed.example.test')).toEqual(['198.51.100.10']);
    expect(await resolveFrom(podIp, 'denied.example.test')).toBe('ENOTFOUND');
    const https = await connectThrough(podIp, 'allowed.example.test:443', 'allowed.example.test');
    expect(https.status).toBe(200);
    expect(https.body).toContain('"host":"allowed.example.test"');
    const http = await getThrough(podIp, 'http://allowed.example.test/');
    expect(http.status).toBe(200);
    expect(JSON.parse(http.body)).toMatchObject({ scheme: 'http', host: 'allowed.example.test' });

    // CONNECT to a denied name: 403 naming the rule, three times (a retry loop).
    for (let i = 0; i < 3; i++)
      expect(await connectThrough(podIp, 'denied.example.test:443', 'denied.example.test')).toEqual(
        { status: 403, rule: 'default%3Aallowlist', body: '' },
      );
    // An allowed CONNECT host with a denied SNI inside the tunnel: cut, never spliced.
    const fronted = await connectThrough(podIp, 'allowed.example.test:443', 'denied.example.test');
    expect(fronted.body).toMatch(/^tls: /);
    // The DNS question for the denied name above is its own line; the CONNECTs are one more.
    const hooks = await receiver.waitFor(
      1,
      (w) =>
        w.payload.type === 'egress.denied' &&
        (w.payload.data as { protocol?: string }).protocol === 'tcp',
      15_000,
    );
    expect(hooks[0]!.payload.data).toMatchObject({
      name: 'denied.example.test',
      protocol: 'tcp',
      port: 443,
      rule: 'default:allowlist',
    });
    // The three refused CONNECTs are one line with their count (two, should a minute turn
    // between them); the fronted tunnel is a line of its own (it names the address it tried).
    await waitFor(
      async () => {
        const lines = (await call('GET', `/v1/claims/${claimId}/egress-events`))
          .json()
          .data.filter(
            (e: { name: string; protocol: string; ip: string | null }) =>
              e.name === 'denied.example.test' && e.protocol === 'tcp' && e.ip === null,
          ) as { count: number }[];
        return lines.reduce((sum, e) => sum + e.count, 0) >= 3 && lines.length <= 2;
      },
      15_000,
      200,
    );

    // The admin's one-step allow: a PUT of the pool; the running claim's next CONNECT passes.
    const put = await call('PUT', '/v1/pools/web', {
      ...s.backend.pool,
      autoscaling: { min: 0, initial: 1, max: 2 },
      egress: {
        mode: 'allowlist',
        allow: ['allowed.example.test', 'denied.example.test'],
        deny: [],
      },
    });
    expect(put.statusCode, put.body).toBeLessThan(300);
    await waitFor(
      async () =>
        (await connectThrough(podIp, 'denied.example.test:443', 'denied.example.test')).status ===
        200,
      15_000,
      200,
    );
  });

  it('a Pod of a pool without egress reaches nothing, and no other address is served', async () => {
    const { podIp } = await claimIn('offline', undefined);
    expect(await resolveFrom(podIp, 'allowed.example.test')).toBe('ENOTFOUND');
    const refused = await connectThrough(podIp, 'allowed.example.test:443', 'allowed.example.test');
    expect(refused.status).toBe(403);
    expect((await getThrough(podIp, 'http://198.51.100.10/')).status).toBe(403);
    // 127.0.0.1 is no sandbox's Pod: refused before any policy is looked at.
    expect(await getThrough('127.0.0.1', 'http://allowed.example.test/')).toMatchObject({
      status: 403,
      rule: 'egress%3Aunknown-source',
    });
    expect(await resolveFrom('127.0.0.1', 'allowed.example.test')).toBe('EREFUSED');
  });

  it('a credential bound to a host is added at the point; the Pod trusts the installation CA and never holds the value', async () => {
    const value = `cub-kube-${randomBytes(12).toString('hex')}`;
    const secret = await call('PUT', '/v1/secrets/KUBE_API_TOKEN', {
      value,
      inject: { hosts: ['api.example.test'], header: 'Authorization', format: 'Bearer {value}' },
    });
    expect(secret.statusCode, secret.body).toBe(201);
    const { claimId, pod, podIp } = await claimIn('bound', {
      mode: 'allowlist',
      allow: ['allowed.example.test', 'api.example.test:443'],
      deny: [],
    });
    // The Pod's trust stores: the system bundle plus the CA over the system path, the CA alone
    // for Node, both from its guest Secret, which holds the CA's certificate and no value.
    const container = (pod as V1Pod).spec!.containers[0]!;
    expect(container.env).toContainEqual({
      name: 'NODE_EXTRA_CA_CERTS',
      value: '/run/cubicle/egress-ca.pem',
    });
    expect(
      container.volumeMounts
        ?.filter((m) => m.name === 'egress-trust')
        .map((m) => [m.mountPath, m.subPath]),
    ).toEqual([
      ['/etc/ssl/certs/ca-certificates.crt', 'ca-certificates.crt'],
      ['/run/cubicle/egress-ca.pem', 'egress-ca.pem'],
    ]);
    const guestSecret = await core().readNamespacedSecret({
      name: (pod as V1Pod).spec!.volumes!.find((v) => v.name === 'egress-trust')!.secret!
        .secretName!,
      namespace,
    });
    const file = (key: string) => Buffer.from(guestSecret.data![key]!, 'base64').toString('utf8');
    const caPem = file('egress-ca.pem');
    expect(caPem).toContain('BEGIN CERTIFICATE');
    expect(file('ca-certificates.crt').trimEnd().endsWith(caPem.trim())).toBe(true);
    for (const text of [JSON.stringify(pod), JSON.stringify(guestSecret)])
      expect(text).not.toContain(value);

    // From the Pod's address, trusting only what the Pod trusts: the bound host's certificate is
    // the installation CA's and the fake server sees the header (the claim's credentials reach
    // the point within moments of the claim).
    const seenBound = () =>
      internet.seen.filter((r) => r.host === 'api.example.test' && r.path === '/echo-headers');
    let bound: Through | undefined;
    await waitFor(
      async () => {
        bound = await connectThrough(podIp, 'api.example.test:443', 'api.example.test', {
          ca: caPem,
          path: '/echo-headers',
        });
        return seenBound().at(-1)?.headers.authorization === `Bearer ${value}`;
      },
      20_000,
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(bound)}; point: ${point!.output()}`);
    });
    expect(bound).toMatchObject({ status: 200, issuer: 'Cubicle egress CA' });
    expect(bound!.body).toContain('authorization');
    expect(bound!.body).not.toContain(value);
    // Every other host is spliced: its own certificate, no header.
    const other = await connectThrough(podIp, 'allowed.example.test:443', 'allowed.example.test', {
      path: '/plain',
    });
    expect(other).toMatchObject({ status: 200, issuer: 'Cubicle fake internet test CA' });
    const plain = internet.seen.filter(
      (r) => r.host === 'allowed.example.test' && r.path === '/plain',
    );
    expect(plain.at(-1)?.headers.authorization).toBeUndefined();
    // Nothing the claim's owner or operator reads carries the value.
    const events = await call('GET', `/v1/claims/${claimId}/egress-events`);
    expect(events.body).not.toContain(value);
    expect(point!.output()).not.toContain(value);
    expect(s.worker.output()).not.toContain(value);
  });
});
