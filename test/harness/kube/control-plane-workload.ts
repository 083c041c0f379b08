// The node agent's path for a Pod whose image is one of Cubicle's own (images/api, worker, web):
// instead of a desktop, the matching local process from this checkout's build
// (control-plane-pods.ts: the manifest's env, args, Secrets/ConfigMaps and a real token of its
// service account). Status is written as kubelet writes it: Running with Ready from the
// readinessProbe, and, for a Pod that must not restart (a Job's), Succeeded or Failed with the
// exit code once the process ends.
import type { CoreV1Api, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import {
  componentOf,
  runControlPlanePod,
  type PodSpec,
  type RunningPod,
} from './control-plane-pods.js';
import type { RawClient } from './dry-run.js';
import type { LoopbackIpPool } from './loopback-ips.js';
import { waitForProbe } from './probe.js';
import type { KubeCluster } from './start-cluster.js';
import { condition } from './write-status.js';

/** isControlPlanePod: the Pod's one container runs a Cubicle control-plane image. */
export function isControlPlanePod(pod: V1Pod): boolean {
  const containers = pod.spec?.containers ?? [];
  if (containers.length !== 1) return false;
  try {
    componentOf(containers[0]!.image ?? '');
    return true;
  } catch {
    return false;
  }
}

export interface ControlPlaneWorkload {
  pod: RunningPod;
  /** The exit code once the process ended (null: killed by a signal). */
  exited: Promise<number | null>;
  /** stop sends SIGTERM (as kubelet does on delete) and resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface ControlPlaneContext {
  cluster: KubeCluster;
  /** Admin access: Secrets, ConfigMaps and TokenRequests, as the kubelet has. */
  client: RawClient;
  core: CoreV1Api;
  namespace: string;
  ips: LoopbackIpPool;
  log: (line: string) => void;
}

type Phase = 'Running' | 'Succeeded' | 'Failed';

async function writeStatus(
  ctx: ControlPlaneContext,
  name: string,
  uid: string,
  report: { phase: Phase; ip: string; isReady: boolean; startedAt: Date; exitCode?: number },
): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt += 1) {
    const pod = await ctx.core.readNamespacedPod({ name, namespace: ctx.namespace });
    if (pod.metadata?.uid !== uid) return;
    const previous = pod.status?.conditions;
    const container = pod.spec!.containers[0]!;
    const state: V1ContainerStatus['state'] =
      report.phase === 'Running'
        ? { running: { startedAt: report.startedAt } }
        : {
            terminated: {
              exitCode: report.exitCode ?? 137,
              reason: report.phase === 'Succeeded' ? 'Completed' : 'Error',
              startedAt: report.startedAt,
              finishedAt: new Date(),
            },
          };
    pod.status = {
      phase: report.phase,
      hostIP: '127.0.0.1',
      hostIPs: [{ ip: '127.0.0.1' }],
      podIP: report.ip,
      podIPs: [{ ip: report.ip }],
      startTime: pod.status?.startTime ?? report.startedAt,
      conditions: [
        condition('PodScheduled', true, previous),
        condition('Initialized', true, previous),
        condition('ContainersReady', report.isReady, previous),
        condition('Ready', report.isReady, previous),
      ],
      containerStatuses: [
        {
          name: container.name,
          image: container.image ?? '',
          imageID: '',
          containerID: `cubicle://${name}`,
          ready: report.isReady,
          started: report.phase === 'Running',
          restartCount: 0,
          state,
        },
      ],
    };
    try {
      await ctx.core.replaceNamespacedPodStatus({ name, namespace: ctx.namespace, body: pod });
      return;
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (code === 404) return;
      if (code !== 409) throw error;
    }
  }
}

/**
 * startControlPlaneWorkload runs the Pod's process on its own loopback IP and keeps its status
 * current until it exits; `isWanted` turns false once the agent stops or replaces it.
 */
export async function startControlPlaneWorkload(
  ctx: ControlPlaneContext,
  pod: V1Pod,
  isWanted: () => boolean,
): Promise<ControlPlaneWorkload> {
  const name = pod.metadata!.name!;
  const uid = pod.metadata!.uid!;
  const spec = pod.spec as unknown as PodSpec & { restartPolicy?: string };
  const container = spec.containers[0]!;
  const ports = (container.ports ?? []).map((p) => p.containerPort);
  const ip = await ctx.ips.allocate(ports);
  const startedAt = new Date();
  let running: RunningPod;
  try {
    running = await runControlPlanePod({
      cluster: ctx.cluster,
      client: ctx.client,
      namespace: ctx.namespace,
      name,
      spec,
      ip,
    });
  } catch (error) {
    ctx.ips.release(ip);
    throw error;
  }
  ctx.log(`node agent: started ${name} (${container.image}) on ${ip}`);
  let isReady = false;
  const exited = new Promise<number | null>((resolve) => {
    if (running.child.exitCode !== null) return resolve(running.child.exitCode);
    running.child.once('exit', (code) => resolve(code));
  });
  await writeStatus(ctx, name, uid, { phase: 'Running', ip, isReady, startedAt });
  const probe = container.readinessProbe?.httpGet;
  if (probe) {
    void waitForProbe(
      `http://${ip}:${running.port(probe.port)}${probe.path}`,
      () => isWanted() && running.child.exitCode === null,
    ).then(async (isUp) => {
      if (!isUp || !isWanted()) return;
      isReady = true;
      ctx.log(`node agent: ${name} Ready`);
      await writeStatus(ctx, name, uid, { phase: 'Running', ip, isReady, startedAt });
    });
  }
  void exited.then(async (code) => {
    ctx.ips.release(ip);
    ctx.log(`node agent: ${name} exited with ${code}`);
    // A Job's Pod (restartPolicy Never/OnFailure) ends; a Deployment's would be restarted by
    // kubelet, which the harness does not do: it reports the failure and leaves it there.
    const phase: Phase = code === 0 && spec.restartPolicy !== 'Always' ? 'Succeeded' : 'Failed';
    if (isWanted())
      await writeStatus(ctx, name, uid, {
        phase,
        ip,
        isReady: false,
        startedAt,
        ...(code === null ? {} : { exitCode: code }),
      }).catch((error: unknown) => ctx.log(`node agent: ${name} status: ${String(error)}`));
  });
  return { pod: running, exited, stop: () => running.stop() };
}
