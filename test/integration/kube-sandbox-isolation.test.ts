// Issue 11 §1: the test node agent runs Pods with the same isolation as local desktops. A Pod
// built by the kubernetes backend's own spec, run by the agent, is driven over its Pod IP; from
// its shell it must be an unprivileged user with only its own processes and environment, and
// reach neither the cluster's API server nor anything else on this machine.
import { connect, createServer, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import { buildGuestSecret, buildSandboxPod, newGuestToken } from '@cubicle/backends';
import { newId } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startKubeCluster,
  startNodeAgent,
  type KubeCluster,
  type NodeAgent,
} from '../harness/kube/index.js';

const PROBE = String.raw`
import json, socket, sys
out = {}
for name, (host, port) in json.loads(sys.argv[1]).items():
    try:
        socket.create_connection((host, port), 2).close()
        out[name] = 'connected'
    except Exception as e:
        out[name] = type(e).__name__
print(json.dumps(out))
`;

describe('node agent Pods are sandboxed like local desktops', () => {
  let cluster: KubeCluster;
  let agent: NodeAgent;
  let namespace: string;
  let hostListener: Server;
  let hostPort = 0;

  beforeAll(async () => {
    hostListener = createServer((socket) => socket.end('host\n'));
    await new Promise<void>((resolve) => hostListener.listen(0, '127.0.0.1', resolve));
    hostPort = (hostListener.address() as { port: number }).port;
    cluster = await startKubeCluster({ withKubevirt: false });
    namespace = await cluster.createNamespace();
    agent = await startNodeAgent({
      kubeconfig: cluster.kubeconfig,
      namespace,
      withKubevirt: false,
    });
    await agent.synced;
  }, 120_000);
  afterAll(async () => {
    await agent?.stop();
    await cluster?.stop();
    hostListener?.close();
  }, 60_000);

  it('runs the Pod unprivileged, alone, without the token in its environment and offline', async () => {
    const template = {
      sandboxId: newId('sandbox'),
      tenantId: newId('tenant'),
      poolId: newId('pool'),
      image: 'registry.example/cubicle/desktop:test',
      cpuMillis: 500,
      memoryMb: 1024,
      env: { POOL_GREETING: 'hello' },
    };
    const token = newGuestToken();
    const core = cluster.kubeconfig.makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({
      namespace,
      body: buildGuestSecret(template, namespace, token),
    });
    const pod = buildSandboxPod(template, { namespace });
    await core.createNamespacedPod({ namespace, body: pod });
    let ip = '';
    for (let i = 0; i < 300 && !ip; i += 1) {
      const workload = agent.workload('Pod', pod.metadata!.name!);
      if (workload?.isReady) ip = workload.ip;
      else await sleep(100);
    }
    expect(ip).not.toBe('');
    const shell = async (body: object) => {
      const res = await fetch(`http://${ip}:8080/v1/shell/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ timeout_ms: 20_000, ...body }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { stdout: string; exit_code: number };
    };

    expect((await shell({ command: 'id -u' })).stdout.trim()).not.toBe('0');
    const env = (await shell({ command: 'env' })).stdout;
    expect(env).toMatch(/^POOL_GREETING=hello$/m);
    expect(env).not.toContain(token);
    // Only the secrets directory's path (set by the guest for per-claim secret files).
    expect((env.match(/^CUBICLE_\w*/gm) ?? []).filter((n) => n !== 'CUBICLE_SECRETS_DIR')).toEqual(
      [],
    );
    const dump = await shell({
      command: `for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; echo; done 2>/dev/null`,
    });
    expect(dump.stdout).toContain('DISPLAY=');
    expect(dump.stdout).not.toContain(token);
    const ps = (await shell({ command: 'ps -eo comm=' })).stdout.trim().split('\n');
    expect(ps[0]).toBe('bwrap');
    for (const host of ['kube-apiserver', 'etcd', 'vitest', 'node-agent'])
      expect(ps, host).not.toContain(host);
    expect((await shell({ command: 'cat /etc/shadow' })).exit_code).not.toBe(0);

    const apiServer = new URL(cluster.server);
    const targets = {
      apiServer: [apiServer.hostname, Number(apiServer.port)],
      hostTcp: ['127.0.0.1', hostPort],
      ownPodIp: [ip, 8080],
    };
    const probe = await shell({
      argv: ['/usr/bin/python3', '-c', PROBE, JSON.stringify(targets)],
    });
    const results = JSON.parse(probe.stdout) as Record<string, string>;
    for (const name of Object.keys(targets)) expect(results[name], name).not.toBe('connected');
    // From the host the API server is there: the probe's targets are real.
    const fromHost = await new Promise<string>((resolve) => {
      const socket = connect({ host: apiServer.hostname, port: Number(apiServer.port) });
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (error) => resolve(error.message));
    });
    expect(fromHost).toBe('connected');
  });
});
