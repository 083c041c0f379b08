// Issue 36, "On the real node": `helm install` of helm/cubicle on a real kubelet + containerd with
// the images scripts/images/build.mjs made here (api, worker, desktop-minimal, and the in-chart
// PostgreSQL and Redis: Debian-built stand-ins for Docker Hub's, images/test-datastores/). The
// chart's Services are routed by kube-proxy (iptables mode) and its in-cluster names answered by
// the harness's cluster DNS (real-node/dns.ts). Then: the Pod security settings as seen inside the
// api and worker containers; a claim through the api Service provisions a desktop Pod from the
// desktop image; observe/act/screenshot through its guest and the view-only stream, both through
// the api Pod; SIGTERM drains (the viewer gets 4503); the sandbox NetworkPolicy is declared (not
// enforced: the bridge plugin has no policy engine); release deletes the Pod; `helm upgrade`
// runs the migration hook before it rolls the Deployments.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { AppsV1Api, BatchV1Api, CoreV1Api, Exec, NetworkingV1Api } from '@kubernetes/client-node';
import { sandboxObjectName } from '@cubicle/backends';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireHelm } from '../../harness/kube/helm.js';
import { startRealNodeCluster, type RealNodeCluster } from '../../harness/kube/real-node/index.js';
import { RawRfbClient } from '../support/rfb-client.js';
import { waitFor } from '../support/stack.js';

const RELEASE = 'cubicle';
const NAMESPACE = 'cubicle';
const SANDBOXES = 'cubicle-sandboxes';
const CHART = join(import.meta.dirname, '..', '..', '..', 'helm', 'cubicle');

interface Run {
  code: number | null;
  out: string;
}

/** run spawns without blocking the event loop: the cluster DNS answers from this process. */
function run(command: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: { PATH: '/usr/bin:/bin', ...env } });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('the Helm chart on a real node (kubelet, containerd, kube-proxy)', () => {
  let rn: RealNodeCluster;
  let apiUrl = '';
  let auth = '';
  let claimId = '';
  let sandboxId = '';
  let helmEnv: Record<string, string> = {};
  let valuesFile = '';
  const core = () => rn.cluster.kubeconfig.makeApiClient(CoreV1Api);
  const apps = () => rn.cluster.kubeconfig.makeApiClient(AppsV1Api);
  const helm = (args: string[]) => run(requireHelm(), args, helmEnv);
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${apiUrl}${path}`, {
      method,
      headers: {
        authorization: auth,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Not JSON (a screenshot).
    }
    return { status: res.status, text, json };
  };
  /** exec runs a command in a Pod's container (the operator's `kubectl exec`); stdout, or throws. */
  const exec = async (pod: string, container: string, command: string[]) => {
    let stdout = '';
    let stderr = '';
    const sink = (append: (s: string) => void) =>
      new Writable({
        write(chunk: Buffer, _enc, done) {
          append(chunk.toString());
          done();
        },
      });
    const status = await new Promise<{ status?: string; message?: string }>((resolve, reject) => {
      new Exec(rn.cluster.kubeconfig)
        .exec(
          NAMESPACE,
          pod,
          container,
          command,
          sink((s) => (stdout += s)),
          sink((s) => (stderr += s)),
          null,
          false,
          (s) => resolve(s as { status?: string; message?: string }),
        )
        .catch(reject);
    });
    if (status.status !== 'Success')
      throw new Error(`${command.join(' ')}: ${status.message ?? ''} ${stderr}`);
    return stdout;
  };
  const podOf = async (component: string) => {
    const pods = await core().listNamespacedPod({
      namespace: NAMESPACE,
      labelSelector: `app.kubernetes.io/component=${component}`,
    });
    const ready = pods.items.find(
      (p) =>
        !p.metadata?.deletionTimestamp &&
        p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    if (!ready) throw new Error(`no Ready ${component} Pod`);
    return ready;
  };
  const deploymentsReady = async () => {
    for (const name of [`${RELEASE}-api`, `${RELEASE}-worker`]) {
      const d = await apps().readNamespacedDeployment({ name, namespace: NAMESPACE });
      const want = d.spec?.replicas ?? 1;
      const s = d.status;
      if (
        (s?.observedGeneration ?? 0) < (d.metadata?.generation ?? 0) ||
        s?.updatedReplicas !== want ||
        s?.readyReplicas !== want ||
        (s?.replicas ?? 0) !== want
      )
        return false;
    }
    return true;
  };

  beforeAll(async () => {
    const t0 = performance.now();
    rn = await startRealNodeCluster({
      images: ['desktop-minimal', 'api', 'worker', 'postgres', 'redis'],
      withControllers: true,
      services: true,
      // The desktop image is needed only once a pool exists: it imports while the chart installs.
      importLater: ['desktop-minimal'],
      log: console.log,
    });
    console.log(`real node with Services up: ${JSON.stringify(rn.timings)}`);
    // The chart names its images <repository>/<component>:<tag>: one tag for api and worker.
    const tag = `rn-${createHash('sha256')
      .update(`${rn.images.api!.ref} ${rn.images.worker!.ref}`)
      .digest('hex')
      .slice(0, 12)}`;
    for (const name of ['api', 'worker'])
      await rn.containerd.ctr([
        'images',
        'tag',
        '--force',
        rn.images[name]!.ref,
        `localhost/cubicle/${name}:${tag}`,
      ]);
    // The in-chart PostgreSQL's claim: a hostPath volume owned by its uid (no provisioner here).
    const volume = join(rn.dir, 'volumes', 'postgresql');
    mkdirSync(volume, { recursive: true, mode: 0o700 });
    chownSync(volume, 999, 999);
    await core().createPersistentVolume({
      body: {
        metadata: { name: 'rn-postgresql' },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: '',
          hostPath: { path: volume, type: 'Directory' },
        },
      },
    });
    valuesFile = join(rn.dir, 'values.json');
    writeFileSync(
      valuesFile,
      JSON.stringify({
        image: { repository: 'localhost/cubicle', tag, pullPolicy: 'Never' },
        database: {
          inChart: {
            enabled: true,
            image: rn.images.postgres!.ref,
            storage: '1Gi',
            resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '512Mi' } },
          },
        },
        redis: {
          inChart: {
            enabled: true,
            image: rn.images.redis!.ref,
            resources: { requests: { cpu: '25m', memory: '32Mi' }, limits: { memory: '128Mi' } },
          },
        },
        // One of each on two cores, with room for a half-core desktop and a rolling update.
        api: {
          replicas: 1,
          pdb: { enabled: false },
          resources: { requests: { cpu: '100m', memory: '192Mi' }, limits: { memory: '512Mi' } },
        },
        worker: {
          replicas: 1,
          pdb: { enabled: false },
          resources: { requests: { cpu: '100m', memory: '192Mi' }, limits: { memory: '768Mi' } },
        },
        // The chart's default egress point (sandboxes.egress.mode: point), one small replica.
        egressPoint: {
          replicas: 1,
          resources: { requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '384Mi' } },
        },
        web: { enabled: false },
        sandboxes: { namespace: SANDBOXES, imagePullPolicy: 'Never' },
      }),
    );
    helmEnv = {
      KUBECONFIG: rn.cluster.kubeconfigPath,
      HOME: rn.dir,
      HELM_CONFIG_HOME: join(rn.dir, 'helm', 'config'),
      HELM_CACHE_HOME: join(rn.dir, 'helm', 'cache'),
      HELM_DATA_HOME: join(rn.dir, 'helm', 'data'),
    };
    let t = performance.now();
    const install = await helm([
      'install',
      RELEASE,
      CHART,
      '--namespace',
      NAMESPACE,
      '--create-namespace',
      '--values',
      valuesFile,
      '--timeout',
      '10m',
    ]);
    expect(install.code, install.out).toBe(0);
    console.log(
      `helm install (with the migration Job) in ${(performance.now() - t).toFixed(0)} ms`,
    );
    t = performance.now();
    await waitFor(deploymentsReady, 300_000, 500);
    console.log(`api and worker Ready ${(performance.now() - t).toFixed(0)} ms after install`);
    const service = await core().readNamespacedService({
      name: `${RELEASE}-api`,
      namespace: NAMESPACE,
    });
    apiUrl = `http://${service.spec!.clusterIP}:8080`;
    // The operator's first steps (NOTES.txt): a tenant and an admin key, with cubicle-admin.
    const apiPod = (await podOf('api')).metadata!.name!;
    const tenant = JSON.parse(
      await exec(apiPod, 'api', [
        'cubicle-admin',
        'tenant',
        'create',
        '--name',
        'real-node',
        '--json',
      ]),
    ) as { id: string };
    const key = JSON.parse(
      await exec(apiPod, 'api', [
        'cubicle-admin',
        'key',
        'create',
        '--tenant',
        tenant.id,
        '--name',
        'admin',
        '--role',
        'admin',
        '--json',
      ]),
    ) as { key: string };
    auth = `Bearer ${key.key}`;
    console.log(`chart installed and usable in ${(performance.now() - t0).toFixed(0)} ms`);
    // + up to 15 min: on a fresh machine npm test still builds this suite's images beside Vitest.
  }, 1_800_000);

  afterAll(async () => {
    await rn?.stop();
  }, 180_000);

  it('serves the API through its Service (kube-proxy) with the chart names resolved in-cluster', async () => {
    const version = await api('GET', '/v1/version');
    expect(version.status, version.text).toBe(200);
    const health = await fetch(`${apiUrl}/healthz`);
    expect(health.status).toBe(200);
    // The api and worker found PostgreSQL and Redis by their Service names: through the DNS.
    expect(rn.services!.dns.counts.a).toBeGreaterThan(0);
  });

  it('runs the api and worker with the chart Pod security, as seen from inside the containers', async () => {
    for (const component of ['api', 'worker']) {
      const pod = (await podOf(component)).metadata!.name!;
      const sh = (command: string) => exec(pod, component, ['sh', '-c', command]);
      expect((await sh('id -u; id -g')).trim().split('\n'), component).toEqual(['1000', '1000']);
      const status = await sh('cat /proc/self/status');
      expect(status, component).toMatch(/^CapEff:\s+0000000000000000$/m);
      expect(status, component).toMatch(/^CapPrm:\s+0000000000000000$/m);
      expect(status, component).toMatch(/^CapBnd:\s+0000000000000000$/m);
      expect(status, component).toMatch(/^NoNewPrivs:\s+1$/m);
      // 2 = SECCOMP_MODE_FILTER: RuntimeDefault is loaded.
      expect(status, component).toMatch(/^Seccomp:\s+2$/m);
      const ro = await sh('touch /opt/cubicle/probe 2>&1; echo "exit=$?"');
      expect(ro, component).toContain('Read-only file system');
      expect((await sh('touch /tmp/ok && echo writable')).trim(), component).toBe('writable');
      const token = await sh(
        'ls /var/run/secrets/kubernetes.io/serviceaccount 2>&1; echo "exit=$?"',
      );
      // Only the worker talks to the API server (its own account, a Role in the sandbox namespace).
      if (component === 'api') expect(token).toContain('exit=2');
      else expect(token).toContain('token');
    }
  });

  it('provisions a desktop Pod from the desktop image for a claim through the api Service', async () => {
    await rn.importedLater;
    console.log(
      `desktop image imported (beside the install) in ${rn.timings.importLater?.toFixed(0)} ms`,
    );
    const put = await api('PUT', '/v1/pools/real', {
      image: rn.images['desktop-minimal']!.ref,
      backend: 'kubernetes',
      cpu: 0.5,
      memory_mb: 1024,
      autoscaling: { min: 0, initial: 1, max: 1 },
    });
    expect(put.status, put.text).toBe(201);
    const started = Date.now();
    await waitFor(
      async () =>
        ((await api('GET', '/v1/pools/real')).json.counts as { warm?: number } | undefined)
          ?.warm === 1,
      300_000,
      500,
    );
    console.log(`pool warm after ${Date.now() - started} ms`);
    const claim = await api('POST', '/v1/pools/real/claims', { ttl_seconds: 900 });
    expect(claim.status, claim.text).toBe(201);
    claimId = claim.json.id as string;
    sandboxId = (claim.json.sandbox as { id: string }).id;
    const pod = await core().readNamespacedPod({
      name: sandboxObjectName(sandboxId),
      namespace: SANDBOXES,
    });
    expect(pod.spec?.nodeName).toBe(rn.nodeName);
    expect(pod.status?.phase).toBe('Running');
    expect(pod.status?.containerStatuses?.[0]?.image).toBe(rn.images['desktop-minimal']!.ref);
    const shell = await api('POST', `/v1/claims/${claimId}/shell`, {
      command: 'echo driven',
      timeout_ms: 20_000,
    });
    expect(shell.status, shell.text).toBe(200);
    expect(shell.json.stdout).toBe('driven\n');
    // The worker in its Pod made the installation's egress CA (its image has the openssl that
    // takes), and the desktop Pod got it through its guest Secret: bound credentials can be
    // injected at the chart's egress point.
    const trust = await api('POST', `/v1/claims/${claimId}/shell`, {
      command: 'grep -c "BEGIN CERTIFICATE" /run/cubicle/egress-ca.pem',
      timeout_ms: 20_000,
    });
    expect(trust.status, trust.text).toBe(200);
    expect(trust.json.stdout, trust.text).toBe('1\n');
  }, 420_000);

  it('observes, acts and screenshots through the guest, via the api Pod', async () => {
    const launched = await api('POST', `/v1/claims/${claimId}/windows/launch`, {
      argv: ['galculator'],
      wait_for_window_ms: 30_000,
    });
    expect(launched.status, launched.text).toBe(200);
    const windowId = (launched.json.window as { window_id: number }).window_id;
    const ready = await api('POST', `/v1/claims/${claimId}/verify`, {
      window_id: windowId,
      predicates: [
        { kind: 'element_exists', selector: { role: 'toggle_button', name: '=' }, unique: true },
      ],
      timeout_ms: 20_000,
    });
    expect(ready.json.status, ready.text).toBe('satisfied');
    const observed = await api('POST', `/v1/claims/${claimId}/observe`, {
      window_id: windowId,
      include_screenshot: false,
    });
    expect(observed.status, observed.text).toBe(200);
    expect(observed.text).toContain('"=');
    const shot = await fetch(`${apiUrl}/v1/claims/${claimId}/screenshot`, {
      headers: { authorization: auth },
    });
    expect(shot.status).toBe(200);
    const png = PNG.sync.read(Buffer.from(await shot.arrayBuffer()));
    expect([png.width, png.height]).toEqual([1280, 800]);
  });

  it('streams the desktop view-only through the api Pod, and SIGTERM drains the stream', async () => {
    const ticket = await api('POST', `/v1/claims/${claimId}/viewer-tickets`, { mode: 'view' });
    expect(ticket.status, ticket.text).toBe(201);
    const viewer = await RawRfbClient.connect(
      `${apiUrl.replace(/^http/, 'ws')}/v1/viewer/stream?ticket=${ticket.json.ticket as string}`,
    );
    expect((await viewer.read(12, 30_000)).toString('latin1')).toMatch(/^RFB 003\.00\d\n$/);
    // Deleting the api Pod: kubelet runs the preStop sleep, then SIGTERM reaches node through
    // tini, whose handler drains: the viewer gets 4503 (reconnect) instead of a cut connection.
    const apiPod = (await podOf('api')).metadata!.name!;
    const deleted = Date.now();
    await core().deleteNamespacedPod({ name: apiPod, namespace: NAMESPACE });
    const closed = await viewer.closed;
    console.log(`viewer closed ${closed.at - deleted} ms after the api Pod's deletion`);
    expect(closed.code).toBe(4503);
    await waitFor(deploymentsReady, 180_000, 500);
  }, 300_000);

  it('declares the sandbox NetworkPolicy over the desktop Pod (no policy engine enforces it here)', async () => {
    // The CNI bridge plugin has no policy engine: declared, not enforced, on this node.
    const pod = await core().readNamespacedPod({
      name: sandboxObjectName(sandboxId),
      namespace: SANDBOXES,
    });
    const policy = await rn.cluster.kubeconfig
      .makeApiClient(NetworkingV1Api)
      .readNamespacedNetworkPolicy({ name: 'cubicle-sandboxes', namespace: SANDBOXES });
    const labels = pod.metadata?.labels ?? {};
    for (const [key, value] of Object.entries(policy.spec?.podSelector?.matchLabels ?? {}))
      expect(labels[key], key).toBe(value);
    expect(policy.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec?.ingress?.flatMap((rule) => rule.ports?.map((p) => p.port))).toEqual([
      8080, 5900,
    ]);
    // Ingress only from this release's api and worker Pods, in the release's namespace.
    const from = policy.spec?.ingress?.flatMap((rule) => rule._from ?? []) ?? [];
    expect(from.length).toBeGreaterThan(0);
    const apiLabels = (await podOf('api')).metadata!.labels!;
    for (const peer of from) {
      expect(peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name']).toBe(NAMESPACE);
      const expressions = peer.podSelector?.matchExpressions ?? [];
      expect(
        expressions.some(
          (e) => e.key === 'app.kubernetes.io/component' && e.values?.includes('api'),
        ),
      ).toBe(true);
      for (const [key, value] of Object.entries(peer.podSelector?.matchLabels ?? {}))
        expect(apiLabels[key], key).toBe(value);
    }
  });

  it('release deletes the desktop Pod', async () => {
    const released = await api('DELETE', `/v1/claims/${claimId}`);
    expect(released.status, released.text).toBe(200);
    await waitFor(
      async () =>
        !(await core()
          .readNamespacedPod({ name: sandboxObjectName(sandboxId), namespace: SANDBOXES })
          .then(() => true)
          .catch(() => false)),
      120_000,
      500,
    );
  }, 180_000);

  it('helm upgrade runs the migration Job first, then rolls the Deployments', async () => {
    const before = await Promise.all(
      ['api', 'worker'].map(async (c) => (await podOf(c)).metadata!.name!),
    );
    // The migration Job is a pre-upgrade hook deleted once it succeeds: watch for it meanwhile,
    // and note whether the Deployments were still the old ones when it ran.
    let migrateSeen: { oldTemplate: boolean } | undefined;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const jobs = await rn.cluster.kubeconfig
          .makeApiClient(BatchV1Api)
          .listNamespacedJob({ namespace: NAMESPACE })
          .catch(() => ({ items: [] }));
        if (!migrateSeen && jobs.items.some((j) => j.metadata?.name === `${RELEASE}-migrate`)) {
          const d = await apps().readNamespacedDeployment({
            name: `${RELEASE}-api`,
            namespace: NAMESPACE,
          });
          migrateSeen = { oldTemplate: !d.spec?.template.metadata?.annotations?.['rn/upgrade'] };
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const t = performance.now();
    const upgrade = await helm([
      'upgrade',
      RELEASE,
      CHART,
      '--namespace',
      NAMESPACE,
      '--values',
      valuesFile,
      '--set-string',
      'api.podAnnotations.rn/upgrade=2',
      '--set-string',
      'worker.podAnnotations.rn/upgrade=2',
      '--timeout',
      '10m',
    ]);
    expect(upgrade.code, upgrade.out).toBe(0);
    await waitFor(deploymentsReady, 300_000, 500);
    watching = false;
    await watcher;
    console.log(`helm upgrade rolled out in ${(performance.now() - t).toFixed(0)} ms`);
    expect(migrateSeen).toEqual({ oldTemplate: true });
    const after = await Promise.all(
      ['api', 'worker'].map(async (c) => (await podOf(c)).metadata!.name!),
    );
    for (let i = 0; i < 2; i += 1) expect(after[i]).not.toBe(before[i]);
    const version = await api('GET', '/v1/version');
    expect(version.status).toBe(200);
  }, 600_000);
});
