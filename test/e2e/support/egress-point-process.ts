// The Kubernetes egress point (apps/worker/dist/egress-point/main.js) as a process of the test,
// given what the chart gives its Pods: the stack's database, Redis and queue prefix, the
// keyring (bound secrets and the egress CA's key) and a kubeconfig to watch the sandbox Pods. Its
// upstream is the test's fake internet only (resolver, allowed ranges, the sites' CA), so no
// packet leaves this machine.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import {
  FAKE_DNS,
  FAKE_RANGES,
  type FakeInternet,
} from '../../support/fake-internet/fake-internet.js';
import type { Stack } from './stack.js';

const POINT_MAIN = fileURLToPath(
  new URL('../../../apps/worker/dist/egress-point/main.js', import.meta.url),
);

export interface EgressPointProcess {
  child: ChildProcess;
  /** The last 20,000 characters it wrote (stdout and stderr). */
  output(): string;
  /** Throws with its output when it has exited (for waits). */
  assertRunning(): void;
  stop(): Promise<void>;
}

/**
 * startEgressPointProcess runs the point for `namespace`'s sandbox Pods, serving DNS and the
 * proxy on `host` (`dnsPort`, `proxyPort`).
 */
export function startEgressPointProcess(options: {
  stack: Stack;
  internet: FakeInternet;
  kubeconfigPath: string;
  namespace: string;
  host: string;
  dnsPort: number;
  proxyPort: number;
}): EgressPointProcess {
  const { stack: s } = options;
  let output = '';
  const child = spawn(process.execPath, [POINT_MAIN], {
    env: {
      PATH: process.env.PATH,
      LOG_LEVEL: 'warn',
      DATABASE_URL: s.workerEnv.DATABASE_URL,
      REDIS_URL: s.workerEnv.REDIS_URL!,
      QUEUE_PREFIX: s.workerEnv.QUEUE_PREFIX!,
      KUBECONFIG: options.kubeconfigPath,
      KUBE_NAMESPACE: options.namespace,
      CUBICLE_EGRESS_POINT_HOST: options.host,
      KUBE_EGRESS_POINT_DNS_PORT: String(options.dnsPort),
      KUBE_EGRESS_POINT_PROXY_PORT: String(options.proxyPort),
      CUBICLE_EGRESS_UPSTREAM_DNS: FAKE_DNS,
      CUBICLE_EGRESS_UPSTREAM_GUARD: FAKE_RANGES.join(','),
      // The installation's keyring (bound secrets, the egress CA's key), as the chart gives the
      // point; bound hosts are verified upstream against the fake internet's CA.
      CUBICLE_KEYRING: s.workerEnv.CUBICLE_KEYRING!,
      CUBICLE_EGRESS_UPSTREAM_CA: options.internet.caPath,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (d: Buffer) => (output = (output + d).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return {
    child,
    output: () => output,
    assertRunning: () => {
      if (child.exitCode !== null) throw new Error(`the point exited: ${output}`);
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
