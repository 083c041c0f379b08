// npm run bench:k8s -- --real-node [--sandboxes 3] [--pods 5] [--cpu 0.25] [--rounds 3]
// The kubernetes backend with real desktop Pods: kubelet + containerd + runc on this machine
// (test/harness/kube/real-node), running the desktop image built from Debian packages and this
// checkout (scripts/images/build.mjs, desktop-minimal). Prints three JSON lines: Pod start
// (create → Running → Ready, one Pod after another, p50/p99), claim latency from warm over HTTP
// with the HTTP floor beside it, and the time to refill released sandboxes. Small numbers: the
// node has this machine's two cores, and each desktop Pod requests `--cpu` of them.
import { CoreV1Api } from '@kubernetes/client-node';
import { buildGuestSecret, buildSandboxPod, newGuestToken } from '@cubicle/backends';
import { newId } from '@cubicle/db';
import { startRealNodeCluster } from '../../test/harness/kube/real-node/index.js';
import { burstLatencies, log, percentile, round, startStack } from './lib/stack.mjs';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const sandboxes = arg('sandboxes', 3);
const podCount = arg('pods', 5);
const cpu = arg('cpu', 0.25);
const rounds = arg('rounds', 3);
const memoryMb = 512;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

log('starting the real node (first run: image build and import take minutes)…');
const rn = await startRealNodeCluster({ images: ['desktop-minimal'], log });
const image = rn.images['desktop-minimal']!.ref;
const core = rn.cluster.kubeconfig.makeApiClient(CoreV1Api);
const namespace = await rn.cluster.createNamespace('cubicle-bench-');
let stack: Awaited<ReturnType<typeof startStack>> | undefined;
try {
  // Pod start: the backend's own Pod spec, created one after another (kubelet, runc, the launcher).
  const running: number[] = [];
  const ready: number[] = [];
  for (let i = 0; i < podCount; i++) {
    const template = {
      sandboxId: newId('sandbox'),
      tenantId: newId('tenant'),
      poolId: newId('pool'),
      image,
      cpuMillis: Math.round(cpu * 1000),
      memoryMb,
      env: {},
    };
    const token = newGuestToken();
    await core.createNamespacedSecret({
      namespace,
      body: buildGuestSecret(template, namespace, token),
    });
    const pod = buildSandboxPod(template, { namespace, imagePullPolicy: 'Never' });
    const name = pod.metadata!.name!;
    const started = performance.now();
    await core.createNamespacedPod({ namespace, body: pod });
    let runningMs = 0;
    for (;;) {
      const p = await core.readNamespacedPod({ namespace, name });
      if (!runningMs && p.status?.phase === 'Running') runningMs = performance.now() - started;
      if (p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) break;
      if (performance.now() - started > 120_000) throw new Error(`Pod ${name} not Ready in 120 s`);
      await sleep(50);
    }
    running.push(runningMs);
    ready.push(performance.now() - started);
    await core.deleteNamespacedPod({ namespace, name, body: { gracePeriodSeconds: 0 } });
    for (;;) {
      const gone = await core.readNamespacedPod({ namespace, name }).then(
        () => false,
        () => true,
      );
      if (gone) break;
      await sleep(100);
    }
  }

  log('starting Cubicle…');
  stack = await startStack({
    workerEnv: {
      CUBICLE_BACKENDS: 'kubernetes',
      KUBECONFIG: rn.cluster.kubeconfigPath,
      KUBE_NAMESPACE: namespace,
      KUBE_IMAGE_PULL_POLICY: 'Never',
    },
  });
  const s = stack;
  const spec = (initial: number) => ({
    image,
    backend: 'kubernetes',
    cpu,
    memory_mb: memoryMb,
    autoscaling: { min: 0, initial, max: sandboxes },
  });
  const warm = async () => (await s.call('GET', '/v1/pools/bench')).body.counts.warm as number;
  const waitWarm = async (target: number) => {
    const started = Date.now();
    await s.waitFor(async () => (await warm()) >= target, 600_000, `${target} warm`);
    return (Date.now() - started) / 1000;
  };
  await s.call('PUT', '/v1/pools/bench', spec(sandboxes));
  const fillSeconds = await waitWarm(sandboxes);
  log(`${sandboxes} warm in ${fillSeconds.toFixed(1)} s`);
  await s.call('PUT', '/v1/pools/bench', spec(0));

  const client = await s.httpClient(sandboxes);
  await Promise.all(Array.from({ length: sandboxes }, () => client('GET', '/v1/version')));
  const floor: number[] = [];
  for (let i = 0; i < 10; i++)
    floor.push(...(await burstLatencies(client, sandboxes, 'GET', '/v1/version')));
  // Rounds of: claim every warm desktop at once, release them all, time the pool back to full.
  const claims: { ms: number; status: number; id: string }[] = [];
  const refills: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const batch = await Promise.all(
      Array.from({ length: sandboxes }, async () => {
        const started = performance.now();
        const res = await client('POST', '/v1/pools/bench/claims', { wait_seconds: 0 });
        return { ms: performance.now() - started, status: res.status, id: res.body.id as string };
      }),
    );
    claims.push(...batch);
    for (const c of batch) if (c.id) await s.call('DELETE', `/v1/claims/${c.id}`);
    await s.call('PUT', '/v1/pools/bench', spec(sandboxes));
    refills.push(await waitWarm(sandboxes));
    await s.call('PUT', '/v1/pools/bench', spec(0));
  }
  client.close();

  const lines = [
    {
      bench: 'pod_start',
      backend: 'kubernetes',
      node: 'real (kubelet v1.36.5, containerd 1.6, runc)',
      image,
      pods: podCount,
      cpu,
      memory_mb: memoryMb,
      running_p50_ms: round(percentile(running, 50)),
      running_p99_ms: round(percentile(running, 99)),
      ready_p50_ms: round(percentile(ready, 50)),
      ready_p99_ms: round(percentile(ready, 99)),
      node_startup_ms: Object.fromEntries(
        Object.entries(rn.timings).map(([k, v]) => [k, Math.round(v)]),
      ),
    },
    {
      bench: 'claim',
      backend: 'kubernetes',
      node: 'real',
      sandboxes,
      concurrency: sandboxes,
      rounds,
      claims: claims.length,
      p50_ms: round(
        percentile(
          claims.map((c) => c.ms),
          50,
        ),
      ),
      p99_ms: round(
        percentile(
          claims.map((c) => c.ms),
          99,
        ),
      ),
      not_from_warm: claims.filter((c) => c.status !== 201).length,
      http_floor_p50_ms: round(percentile(floor, 50)),
      http_floor_p99_ms: round(percentile(floor, 99)),
    },
    {
      bench: 'refill',
      backend: 'kubernetes',
      node: 'real',
      sandboxes,
      rounds,
      p50_seconds: round(percentile(refills, 50), 1),
      max_seconds: round(Math.max(...refills), 1),
      initial_fill_seconds: round(fillSeconds, 1),
    },
  ];
  for (const line of lines) process.stdout.write(`${JSON.stringify(line)}\n`);
} finally {
  await stack?.stop();
  await rn.stop();
}
