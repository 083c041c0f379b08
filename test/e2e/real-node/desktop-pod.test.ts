// Issue 36: the desktop image on a real node. A pool of the kubernetes backend whose image is
// localhost/cubicle/desktop-minimal (built from Debian packages and this checkout by
// scripts/images/build.mjs, imported into containerd), run by a real kubelet + containerd + runc:
// the claim gets a Pod the scheduler placed and kubelet started, the agent observes, acts and
// screenshots through the guest driver inside it, the Pod security settings hold as seen from a
// shell inside the container, and release deletes the Pod.
import { connect } from 'node:net';
import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { guestSecretName, sandboxObjectName } from '@cubicle/backends';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viewerPreambleOfToken } from '../../../packages/driver-guest/src/vnc/viewer-preamble.js';
import { startRealNodeCluster, type RealNodeCluster } from '../../harness/kube/real-node/index.js';
import { startStack, waitFor, type Stack } from '../support/stack.js';
import { realNodeBackend } from './support/real-node-backend.js';

describe('a desktop Pod on a real node (kubelet + containerd)', () => {
  let rn: RealNodeCluster;
  let s: Stack;
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
  const drive = (path: string, payload?: unknown) =>
    call(payload === undefined ? 'GET' : 'POST', `/v1/claims/${claimId}/${path}`, payload);
  const shell = async (command: string) => {
    const res = await drive('shell', { command, timeout_ms: 20_000 });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { stdout: string; exit_code: number | null };
  };
  const core = () => rn.cluster.kubeconfig.makeApiClient(CoreV1Api);

  beforeAll(async () => {
    rn = await startRealNodeCluster({ images: ['desktop-minimal'], log: console.log });
    console.log(`real node up: ${JSON.stringify(rn.timings)}`);
    namespace = await rn.cluster.createNamespace();
    s = await startStack({
      customBackend: realNodeBackend(rn, namespace, { image: rn.images['desktop-minimal']!.ref }),
    });
    // Half a core: the node has two, and the control plane and other work share them.
    const put = await call('PUT', '/v1/pools/real', {
      ...s.backend.pool,
      cpu: 0.5,
      memory_mb: 1024,
      autoscaling: { min: 0, initial: 1, max: 1 },
    });
    expect(put.statusCode, put.body).toBe(201);
    const started = Date.now();
    await waitFor(
      async () => (await call('GET', '/v1/pools/real')).json().counts.warm === 1,
      240_000,
      250,
    );
    console.log(`pool warm after ${Date.now() - started} ms`);
    const claim = await call('POST', '/v1/pools/real/claims', { ttl_seconds: 900 });
    expect(claim.statusCode, claim.body).toBe(201);
    claimId = claim.json().id;
    sandboxId = claim.json().sandbox.id;
    // + up to 15 min: on a fresh machine npm test still builds this suite's images beside Vitest.
  }, 1_500_000);
  afterAll(async () => {
    await s?.close();
    await rn?.stop();
  }, 180_000);

  it('runs the claim in a Pod that kubelet started from the desktop image', async () => {
    const pod = await core().readNamespacedPod({ name: sandboxObjectName(sandboxId), namespace });
    expect(pod.spec?.nodeName).toBe(rn.nodeName);
    expect(pod.status?.phase).toBe('Running');
    expect(pod.status?.podIP).toMatch(/^198\.18\./);
    const status = pod.status?.containerStatuses?.[0];
    expect(status?.ready).toBe(true);
    expect(status?.image).toBe(rn.images['desktop-minimal']!.ref);
    expect(status?.containerID).toMatch(/^containerd:\/\//);
    // The image's config digest, as containerd reports it: the image that was imported.
    expect(status?.imageID).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await rn.containerd.ctr(['images', 'ls', '-q'])).toContain(
      rn.images['desktop-minimal']!.ref,
    );
  });

  it('observes, acts and screenshots through the guest in the Pod', async () => {
    const launched = await drive('windows/launch', {
      argv: ['galculator'],
      wait_for_window_ms: 30_000,
    });
    expect(launched.statusCode, launched.body).toBe(200);
    const windowId = launched.json().window.window_id as number;
    const ready = await drive('verify', {
      window_id: windowId,
      predicates: [
        { kind: 'element_exists', selector: { role: 'toggle_button', name: '=' }, unique: true },
      ],
      timeout_ms: 20_000,
    });
    expect(ready.json().status).toBe('satisfied');
    const observed = await drive('observe', { window_id: windowId, include_screenshot: false });
    expect(observed.statusCode, observed.body).toBe(200);
    expect(JSON.stringify(observed.json())).toContain('"=');
    const shot = await drive('screenshot');
    expect(shot.statusCode).toBe(200);
    const png = PNG.sync.read(shot.rawPayload);
    expect([png.width, png.height]).toEqual([1280, 800]);
    let lit = 0;
    for (let i = 0; i < png.data.length; i += 4)
      if (png.data[i]! + png.data[i + 1]! + png.data[i + 2]! > 60) lit++;
    expect(lit).toBeGreaterThan(1000);
  });

  it('serves VNC on the Pod IP to a viewer that sends the token-derived preamble only', async () => {
    const pod = await core().readNamespacedPod({ name: sandboxObjectName(sandboxId), namespace });
    const secret = await core().readNamespacedSecret({
      name: guestSecretName(sandboxId),
      namespace,
    });
    const token = Buffer.from(secret.data!.token!, 'base64').toString('utf8');
    // First bytes the VNC port sends after `preamble` (none within `waitMs` → '').
    const greeting = (preamble: Buffer | undefined, waitMs: number) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: pod.status!.podIP!, port: 5900 }, () => {
          if (preamble) socket.write(preamble);
        });
        socket.setTimeout(waitMs, () => {
          socket.destroy();
          resolve('');
        });
        socket.once('data', (chunk) => {
          resolve(chunk.toString('latin1'));
          socket.destroy();
        });
        socket.once('error', reject);
      });
    expect(await greeting(undefined, 2000)).toBe('');
    // The launcher starts x11vnc for this first viewer, then relays its RFB banner.
    expect(await greeting(viewerPreambleOfToken(token), 30_000)).toMatch(/^RFB 003\.00\d\n/);
  });

  it('holds the Pod security settings, as seen from inside the container', async () => {
    expect((await shell('id -u; id -g')).stdout.trim().split('\n')).toEqual(['1000', '1000']);
    const status = (await shell('cat /proc/self/status')).stdout;
    expect(status).toMatch(/^CapEff:\s+0000000000000000$/m);
    expect(status).toMatch(/^CapPrm:\s+0000000000000000$/m);
    expect(status).toMatch(/^CapBnd:\s+0000000000000000$/m);
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    // 2 = SECCOMP_MODE_FILTER: the runtime's default profile is loaded.
    expect(status).toMatch(/^Seccomp:\s+2$/m);
    const ro = await shell('touch /etc/cubicle-probe 2>&1; echo "exit=$?"');
    expect(ro.stdout).toContain('Read-only file system');
    expect(ro.stdout).toContain('exit=1');
    expect((await shell('touch /tmp/ok && echo writable')).stdout.trim()).toBe('writable');
    const sa = await shell('ls /var/run/secrets/kubernetes.io/serviceaccount 2>&1; echo "exit=$?"');
    expect(sa.stdout).toContain('exit=2');
    // kubelet always sets the `kubernetes` Service's variables (enableServiceLinks covers only
    // the namespace's Services); without a token and a route they lead nowhere.
    // The Pod network: an address on the node's bridge and no default route off the machine.
    const routes = (await shell('cat /proc/net/route')).stdout.trim().split('\n').slice(1);
    expect(routes.length).toBeGreaterThan(0);
    expect(routes.every((line) => line.split(/\s+/)[1] !== '00000000')).toBe(true);
  });

  it('declares the sandbox NetworkPolicy over the Pod (no policy engine enforces it here)', async () => {
    // The CNI bridge plugin has no policy engine: the policy is declared, not enforced, on this
    // node. Checked: it exists, selects the claim's Pod, and admits only the guest and VNC ports.
    const pod = await core().readNamespacedPod({ name: sandboxObjectName(sandboxId), namespace });
    const policy = await rn.cluster.kubeconfig
      .makeApiClient(NetworkingV1Api)
      .readNamespacedNetworkPolicy({ name: 'cubicle-sandboxes', namespace });
    const labels = pod.metadata?.labels ?? {};
    for (const [key, value] of Object.entries(policy.spec?.podSelector?.matchLabels ?? {}))
      expect(labels[key], key).toBe(value);
    expect(policy.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec?.ingress?.flatMap((rule) => rule.ports?.map((p) => p.port))).toEqual([
      8080, 5900,
    ]);
  });

  it('release deletes the Pod', async () => {
    const released = await call('DELETE', `/v1/claims/${claimId}`);
    expect(released.statusCode).toBe(200);
    await waitFor(
      async () =>
        !(await core()
          .readNamespacedPod({ name: sandboxObjectName(sandboxId), namespace })
          .then(() => true)
          .catch(() => false)),
      60_000,
      250,
    );
    const tasks = await rn.containerd.ctr(['tasks', 'ls']);
    expect(tasks).not.toContain(sandboxObjectName(sandboxId));
  });
});
