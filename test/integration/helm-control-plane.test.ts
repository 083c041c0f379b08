// The chart run for real on the test cluster: `helm install` (its hooks run by the test in helm's
// order: the generated keys Secret, then the migration Job's Pod), the api and worker
// Deployments' Pods run by the release namespace's node agent as local processes from this
// checkout's build (test/harness/kube/control-plane-workload.ts: the manifest's env, Secrets,
// args and a real service-account token of the chart's account; Ready from the readiness probe,
// a Job's Pod Succeeded with its exit code), a claim through the api Service's endpoint
// provisions a sandbox Pod in the sandbox namespace (the node agent runs it as a desktop) with
// nothing but the chart's RBAC, and `helm upgrade` with a changed value re-runs the migration,
// rolls both Deployments (new Pod Ready, then the old one drains) and the claim survives.
// There is no controller manager here: the test plays the Job and ReplicaSet controllers — it
// creates the Pods of the Job's and the Deployments' templates; the node agent runs them, reports
// their status and stops them (SIGTERM) when they are deleted.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KUBE_TOOL_VERSIONS } from '../../scripts/lib/kube-paths.mjs';
import { databasePrefix } from '../harness/context.js';
import { createTestRedisNamespace, type TestRedisNamespace } from '../harness/index.js';
import { quoteIdent, withAdmin, withDatabase } from '../harness/postgres-admin.js';
import type { PodSpec } from '../harness/kube/control-plane-pods.js';
import {
  createObject,
  discoverResources,
  rawClient,
  type KubeObject,
  type RawClient,
} from '../harness/kube/dry-run.js';
import { helm, parseManifests, requireHelm } from '../harness/kube/helm.js';
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
const hookOf = (o: KubeObject) =>
  (o.metadata.annotations as Record<string, string> | undefined)?.['helm.sh/hook'];
/** A control-plane Pod the node agent runs, as the test reaches it. */
interface PodHandle {
  name: string;
  ip: string;
  output(): string;
  port(port: string | number): number;
  /** Deletes the Pod; resolves with the exit code of its drained process. */
  stop(): Promise<number | null>;
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
  /** The release namespace's node: runs the Pods of Cubicle's own images. */
  let node: NodeAgent;
  let index: Awaited<ReturnType<typeof discoverResources>>;
  let databaseName = '';
  let releaseNs = '';
  let sandboxNs = '';
  let objects: KubeObject[] = [];
  let values: string[] = [];
  const running = new Map<string, PodHandle>();
  let base = '';
  let headers: Record<string, string> = {};
  let claimId = '';

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
    index = await discoverResources(client);
    expect(
      (await secret('cubicle-database', withDatabase(postgres.adminUrl, databaseName))).status,
    ).toBe(201);
    expect((await secret('cubicle-redis', redis.url)).status).toBe(201);
    values = [
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
    ];
    const rendered = helm([
      'template',
      'cubicle',
      chart,
      '--namespace',
      releaseNs,
      '--kube-version',
      KUBE_TOOL_VERSIONS.kubeApiserver,
      ...values,
    ]);
    expect(rendered.stderr).toBe('');
    objects = parseManifests(rendered.stdout);
    node = await startNodeAgent({
      kubeconfig: cluster.kubeconfig,
      namespace: releaseNs,
      withKubevirt: false,
      cluster,
    });
    await node.synced;
    // The pre-install hooks before the Job (weight -10: the generated keys Secret), as helm
    // would create them; the Job itself is run by the first test.
    for (const obj of objects.filter((o) => hookOf(o) && o.kind !== 'Job')) {
      const created = await createObject(client, index, obj, releaseNs);
      expect(created.status, `${obj.kind}/${obj.metadata.name}: ${created.body}`).toBe(201);
    }
  }, 180_000);

  afterAll(async () => {
    await node?.stop();
    await agent?.stop();
    await cluster?.stop();
    await redis?.cleanup();
    const { postgres } = inject('cubicle');
    if (databaseName)
      await withAdmin(postgres.adminUrl, (c) =>
        c.query(`DROP DATABASE IF EXISTS ${quoteIdent(databaseName)} WITH (FORCE)`),
      );
  }, 60_000);

  /** helm with this cluster as its kubeconfig. */
  const helmHere = (args: string[]) => helm(args, { KUBECONFIG: cluster.kubeconfigPath });
  /** The Deployment as the API server has it (what a controller would read). */
  const deployment = async (name: string) => {
    const answer = await client.request(
      'GET',
      `/apis/apps/v1/namespaces/${releaseNs}/deployments/${name}`,
    );
    expect(answer.status).toBe(200);
    return answer.json as { metadata: { generation: number }; spec: { template: Template } };
  };
  type PodStatus = {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
  };
  const podStatus = async (name: string) => {
    const answer = await client.request('GET', `/api/v1/namespaces/${releaseNs}/pods/${name}`);
    return answer.status === 200 ? ((answer.json as { status?: PodStatus }).status ?? {}) : null;
  };
  const output = (name: string) =>
    node
      .controlPlanePods()
      .find((p) => p.name === name)
      ?.workload.pod.output() ??
    node.stoppedControlPlanePods.find((p) => p.name === name)?.output ??
    '';
  /** waitForPod polls the status the node agent writes until `done` holds. */
  const waitForPod = async (name: string, done: (s: PodStatus) => boolean, timeoutMs = 90_000) => {
    for (const deadline = Date.now() + timeoutMs; ;) {
      const status = await podStatus(name);
      if (status && done(status)) return status;
      if (Date.now() > deadline)
        throw new Error(`${name}: ${JSON.stringify(status)}\n${output(name).slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  /** createPod makes a Pod of a template, as the ReplicaSet or Job controller would. */
  const createPod = async (name: string, template: Template) => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: releaseNs, labels: template.metadata.labels },
      spec: template.spec,
    } as unknown as KubeObject;
    const created = await createObject(client, index, pod, releaseNs);
    expect(created.status, created.body).toBe(201);
  };
  /** start has the node run one Pod of the Deployment's current template and waits for Ready. */
  const start = async (name: string, generation: number): Promise<PodHandle> => {
    const d = await deployment(name);
    const podName = `${name}-g${generation}`;
    await createPod(podName, d.spec.template);
    const status = await waitForPod(podName, (s) =>
      Boolean(s.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')),
    );
    const container = d.spec.template.spec.containers[0]!;
    return {
      name: podName,
      ip: status.podIP!,
      output: () => output(podName),
      port: (port) =>
        typeof port === 'number'
          ? port
          : container.ports!.find((p) => p.name === port)!.containerPort,
      // Deleting the Pod: the node agent sends SIGTERM and records the exit code.
      stop: async () => {
        await client.request('DELETE', `/api/v1/namespaces/${releaseNs}/pods/${podName}`);
        for (;;) {
          const stopped = node.stoppedControlPlanePods.find((p) => p.name === podName);
          if (stopped) return stopped.code;
          await new Promise((r) => setTimeout(r, 100));
        }
      },
    };
  };
  let migrations = 0;
  /** The pre-install/pre-upgrade migration Job's Pod, run by the node to its end. */
  const migrate = async () => {
    const job = templateOf(objects, 'Job', 'cubicle-migrate');
    const name = `cubicle-migrate-${++migrations}`;
    await createPod(name, job);
    const status = await waitForPod(name, (s) => s.phase === 'Succeeded' || s.phase === 'Failed');
    return { code: status.phase === 'Succeeded' ? 0 : 1, output: output(name) };
  };

  it('the migration Job runs cubicle-migrate against the operator database, then api and worker Pods become Ready', async () => {
    const migrated = await migrate();
    expect(migrated.code, migrated.output).toBe(0);
    expect(migrated.output).toMatch(/migrate: done \([1-9]\d* applied\)/);
    // The release itself (its hooks ran above): Deployments, Services, RBAC, PDBs.
    const install = helmHere([
      'install',
      'cubicle',
      chart,
      '--namespace',
      releaseNs,
      '--no-hooks',
      ...values,
    ]);
    expect(install.code, install.stderr).toBe(0);
    expect(install.stdout).toContain('STATUS: deployed');
    const [api, worker] = await Promise.all([start('cubicle-api', 1), start('cubicle-worker', 1)]);
    running.set('cubicle-api', api);
    running.set('cubicle-worker', worker);
  }, 120_000);

  it("a claim through the api Service's endpoint provisions a sandbox Pod with only the chart's RBAC", async () => {
    const api = running.get('cubicle-api');
    const worker = running.get('cubicle-worker');
    expect(api && worker, 'the previous test starts them').toBeTruthy();
    // The Service selects the api Pod (what kube-proxy would route): its targetPort is the Pod's.
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'cubicle-api')!;
    const { selector, ports } = service.spec as {
      selector: Record<string, string>;
      ports: { targetPort: string; port: number }[];
    };
    const labels = templateOf(objects, 'Deployment', 'cubicle-api').metadata.labels;
    expect(Object.entries(selector).every(([k, v]) => labels[k] === v)).toBe(true);
    base = `http://${api!.ip}:${api!.port(ports[0]!.targetPort)}`;

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
    headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
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
    // An RBAC refusal reads "403 Forbidden … is forbidden: User system:serviceaccount:…".
    expect(worker!.output()).not.toMatch(/\b403 Forbidden\b|is forbidden/);
    claimId = body.id;
  }, 180_000);

  it('helm upgrade with a changed value: migration hook, the Deployments roll, the claim survives', async () => {
    expect(claimId, 'the previous test claims').not.toBe('');
    const before = await deployment('cubicle-api');
    const upgrade = helmHere([
      'upgrade',
      'cubicle',
      chart,
      '--namespace',
      releaseNs,
      '--no-hooks',
      ...values,
      '--set',
      'logLevel=debug',
    ]);
    expect(upgrade.code, upgrade.stderr).toBe(0);
    expect(upgrade.stdout).toContain('REVISION: 2');
    // pre-upgrade: the migration Job again, with nothing left to apply.
    const migrated = await migrate();
    expect(migrated.code, migrated.output).toBe(0);
    expect(migrated.output).toContain('migrate: done (0 applied)');
    // Each Deployment's template changed; roll it (maxUnavailable 0: the new Pod is Ready before
    // the old one gets SIGTERM, and the old one drains and exits 0).
    for (const name of ['cubicle-api', 'cubicle-worker'] as const) {
      const d = await deployment(name);
      expect(d.metadata.generation).toBeGreaterThan(
        name === 'cubicle-api' ? before.metadata.generation : 1,
      );
      const env = d.spec.template.spec.containers[0]!.env ?? [];
      expect(env.find((e) => e.name === 'LOG_LEVEL')?.value).toBe('debug');
      const next = await start(name, 2);
      const old = running.get(name)!;
      expect(await old.stop(), old.output().slice(-2000)).toBe(0);
      running.set(name, next);
    }
    // The claim made before the upgrade, read and kept alive through the new api Pod.
    const api = running.get('cubicle-api')!;
    base = `http://${api.ip}:${api.port('http')}`;
    const claim = await fetch(`${base}/v1/claims/${claimId}`, { headers });
    expect(claim.status).toBe(200);
    expect(((await claim.json()) as { status: string }).status).toBe('active');
    const heartbeat = await fetch(`${base}/v1/claims/${claimId}/heartbeat`, {
      method: 'POST',
      headers,
    });
    expect(heartbeat.status).toBeLessThan(300);
    const list = await client.request(
      'GET',
      `/api/v1/namespaces/${sandboxNs}/pods?labelSelector=cubicle.dev%2Fstate%3Dclaimed`,
    );
    expect((list.json as { items: unknown[] }).items).toHaveLength(1);
    const released = await fetch(`${base}/v1/claims/${claimId}`, { method: 'DELETE', headers });
    expect(released.status).toBeLessThan(300);
  }, 180_000);

  it('SIGTERM: api and worker drain and exit 0', async () => {
    expect(running.size).toBe(2);
    for (const pod of running.values()) expect(await pod.stop(), pod.output().slice(-2000)).toBe(0);
  }, 90_000);
});
