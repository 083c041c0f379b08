// The rendered chart run for real on the test cluster: its objects created in the API server, the
// migration Job's Pod and the api and worker Deployments' Pods run as local processes from this
// checkout's build (test/harness/kube/control-plane-pods.ts: the manifest's env, Secrets, args
// and a real service-account token of the chart's account), and a claim made through the api
// Service's endpoint provisions a sandbox Pod in the sandbox namespace, which the node agent runs
// as a desktop. The worker has nothing but the chart's RBAC: a missing verb fails the claim.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KUBE_TOOL_VERSIONS } from '../../scripts/lib/kube-paths.mjs';
import { databasePrefix } from '../harness/context.js';
import { createTestRedisNamespace, type TestRedisNamespace } from '../harness/index.js';
import { quoteIdent, withAdmin, withDatabase } from '../harness/postgres-admin.js';
import {
  runControlPlanePod,
  runToCompletion,
  type PodSpec,
  type RunningPod,
} from '../harness/kube/control-plane-pods.js';
import {
  createObject,
  discoverResources,
  rawClient,
  type KubeObject,
  type RawClient,
} from '../harness/kube/dry-run.js';
import { helm, parseManifests, requireHelm } from '../harness/kube/helm.js';
import { createLoopbackIpPool } from '../harness/kube/loopback-ips.js';
import {
  startKubeCluster,
  startNodeAgent,
  type KubeCluster,
  type NodeAgent,
} from '../harness/kube/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const chart = join(root, 'helm/cubicle');

interface Template {
  metadata: { labels: Record<string, string> };
  spec: PodSpec;
}
const templateOf = (objects: KubeObject[], kind: string, name: string) => {
  const obj = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!obj) throw new Error(`${kind}/${name} is not rendered`);
  return (obj.spec as { template: Template }).template;
};

describe('the rendered control plane, run for real on the test cluster', () => {
  let cluster: KubeCluster;
  let client: RawClient;
  let redis: TestRedisNamespace;
  let agent: NodeAgent | undefined;
  const pods: RunningPod[] = [];
  const ips = createLoopbackIpPool();
  let databaseName = '';
  let releaseNs = '';
  let sandboxNs = '';
  let objects: KubeObject[] = [];

  beforeAll(async () => {
    requireHelm();
    const { runId, postgres } = inject('cubicle');
    // An empty database: the migration Job has real work to do.
    databaseName = `${databasePrefix(runId)}chart_${Date.now().toString(36)}`;
    await withAdmin(postgres.adminUrl, (c) =>
      c.query(`CREATE DATABASE ${quoteIdent(databaseName)}`),
    );
    redis = createTestRedisNamespace();
    cluster = await startKubeCluster({ withKubevirt: false });
    client = rawClient(cluster);
    releaseNs = await cluster.createNamespace('cubicle-cp-');
    sandboxNs = await cluster.createNamespace('cubicle-sbx-');
    // The operator's Secrets with the connection strings (what the chart reads via existingSecret).
    const secret = (name: string, url: string) =>
      createObject(
        client,
        index,
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: releaseNs },
          stringData: { url },
        } as KubeObject,
        releaseNs,
      );
    const index = await discoverResources(client);
    expect(
      (await secret('cubicle-database', withDatabase(postgres.adminUrl, databaseName))).status,
    ).toBe(201);
    expect((await secret('cubicle-redis', redis.url)).status).toBe(201);
    const rendered = helm([
      'template',
      'cubicle',
      chart,
      '--namespace',
      releaseNs,
      '--kube-version',
      KUBE_TOOL_VERSIONS.kubeApiserver,
      '-f',
      join(chart, 'ci/default-values.yaml'),
      '--set',
      `sandboxes.namespace=${sandboxNs}`,
      '--set',
      'sandboxes.createNamespace=false',
      '--set',
      `queuePrefix=${redis.bullPrefix}`,
      '--set',
      'web.enabled=false',
    ]);
    expect(rendered.stderr).toBe('');
    objects = parseManifests(rendered.stdout);
    // Everything goes into the API server, hooks first (as helm orders them).
    const hooks = objects.filter(
      (o) => (o.metadata.annotations as Record<string, string> | undefined)?.['helm.sh/hook'],
    );
    for (const obj of [...hooks, ...objects.filter((o) => !hooks.includes(o))]) {
      const created = await createObject(client, index, obj, releaseNs);
      expect(created.status, `${obj.kind}/${obj.metadata.name}: ${created.body}`).toBe(201);
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(pods.map((p) => p.stop().catch(() => null)));
    await agent?.stop();
    await cluster?.stop();
    await redis?.cleanup();
    const { postgres } = inject('cubicle');
    if (databaseName)
      await withAdmin(postgres.adminUrl, (c) =>
        c.query(`DROP DATABASE IF EXISTS ${quoteIdent(databaseName)} WITH (FORCE)`),
      );
  }, 60_000);

  const start = async (kind: string, name: string, ports: number[]) => {
    const template = templateOf(objects, kind, name);
    const pod = await runControlPlanePod({
      cluster,
      client,
      namespace: releaseNs,
      name: `${name}-0`,
      spec: template.spec,
      ip: await ips.allocate(ports),
    });
    pods.push(pod);
    return pod;
  };

  it('the migration Job runs cubicle-migrate against the operator database, then api and worker Pods become Ready', async () => {
    const job = templateOf(objects, 'Job', 'cubicle-migrate');
    const migrated = await runToCompletion({
      cluster,
      client,
      namespace: releaseNs,
      name: 'cubicle-migrate-0',
      spec: job.spec,
      ip: await ips.allocate([]),
    });
    expect(migrated.code, migrated.output).toBe(0);
    expect(migrated.output).toMatch(/migrate: done \([1-9]\d* applied\)/);
    const api = await start('Deployment', 'cubicle-api', [8080]);
    const worker = await start('Deployment', 'cubicle-worker', [8081]);
    await Promise.all([api.ready(), worker.ready()]);
  }, 120_000);

  it("a claim through the api Service's endpoint provisions a sandbox Pod with only the chart's RBAC", async () => {
    const [api, worker] = pods;
    expect(api && worker, 'the previous test starts them').toBeTruthy();
    // The Service selects the api Pod (what kube-proxy would route): its targetPort is the Pod's.
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'cubicle-api')!;
    const { selector, ports } = service.spec as {
      selector: Record<string, string>;
      ports: { targetPort: string; port: number }[];
    };
    const labels = templateOf(objects, 'Deployment', 'cubicle-api').metadata.labels;
    expect(Object.entries(selector).every(([k, v]) => labels[k] === v)).toBe(true);
    const base = `http://${api!.ip}:${api!.port(ports[0]!.targetPort)}`;

    agent = await startNodeAgent({
      kubeconfig: cluster.kubeconfig,
      namespace: sandboxNs,
      withKubevirt: false,
    });
    await agent.synced;
    // The operator's first steps (kubectl exec … cubicle-admin), against the same database.
    const { postgres } = inject('cubicle');
    const admin = (...args: string[]) => {
      const r = spawnSync(
        process.execPath,
        [join(root, 'images/api/cubicle-admin.mjs'), ...args, '--json'],
        {
          encoding: 'utf8',
          env: {
            PATH: process.env.PATH,
            DATABASE_URL: withDatabase(postgres.adminUrl, databaseName),
          },
        },
      );
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { id: string; key: string };
    };
    const tenant = admin('tenant', 'create', '--name', 'chart');
    const { key } = admin(
      'key',
      'create',
      '--tenant',
      tenant.id,
      '--name',
      'admin',
      '--role',
      'admin',
    );
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const pool = await fetch(`${base}/v1/pools/desktops`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({
        image: 'cubicle/desktop:test',
        backend: 'kubernetes',
        cpu: 0.5,
        memory_mb: 1024,
        autoscaling: { min: 0, initial: 0, max: 1 },
      }),
    });
    expect(pool.status, await pool.text()).toBe(201);
    const claim = await fetch(`${base}/v1/pools/desktops/claims`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ wait_seconds: 90 }),
    });
    const body = (await claim.json()) as { id: string; status: string; sandbox?: { id: string } };
    expect(claim.status, `${JSON.stringify(body)}\n${worker!.output().slice(-3000)}`).toBe(201);
    expect(body.status).toBe('active');
    // The sandbox Pod the worker made with its in-cluster token, in the sandbox namespace.
    // ... whose `cubicle.dev/state` label the worker flips to `claimed` (after the answer).
    type PodList = { items: { metadata: { labels: Record<string, string> } }[] };
    let items: PodList['items'] = [];
    for (const deadline = Date.now() + 30_000; items.length === 0 && Date.now() < deadline;) {
      const list = await client.request(
        'GET',
        `/api/v1/namespaces/${sandboxNs}/pods?labelSelector=cubicle.dev%2Fstate%3Dclaimed`,
      );
      items = (list.json as PodList).items;
      if (items.length === 0) await new Promise((r) => setTimeout(r, 250));
    }
    expect(items).toHaveLength(1);
    expect(items[0]!.metadata.labels['cubicle.dev/tenant']).toBe(tenant.id);
    const policy = await client.request(
      'GET',
      `/apis/networking.k8s.io/v1/namespaces/${sandboxNs}/networkpolicies/cubicle-sandboxes`,
    );
    expect(policy.status).toBe(200);
    expect(worker!.output()).not.toMatch(/403|forbidden/i);
    const released = await fetch(`${base}/v1/claims/${body.id}`, { method: 'DELETE', headers });
    expect(released.status).toBeLessThan(300);
  }, 180_000);

  it('SIGTERM: api and worker drain and exit 0', async () => {
    for (const pod of pods) expect(await pod.stop(), pod.output().slice(-2000)).toBe(0);
  }, 90_000);
});
