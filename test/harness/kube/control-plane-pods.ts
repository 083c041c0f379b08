// Runs a Pod of Cubicle's own control plane (an images/api, images/worker or images/web
// container) the way a kubelet would, as a local process from this checkout's build: the
// image's ENTRYPOINT/CMD/ENV/WORKDIR come from its Dockerfile (/opt/cubicle mapped to the
// repository), the container's args replace CMD, its env is resolved from the cluster (values,
// Secret and ConfigMap keys, the Downward API's namespace and Pod IP), the kubelet's
// KUBERNETES_SERVICE_HOST/PORT are set, and a Pod with a service account gets a real token of
// that account (TokenRequest) mounted at /var/run/secrets/kubernetes.io/serviceaccount in a
// private mount namespace — so the process finds exactly the in-cluster configuration it would
// find in a cluster, and its API calls carry only that account's RBAC.
// One deviation, for the loopback-only rule here: each Pod gets its own 127.x address (as the
// node agent gives sandbox Pods), and a process told to listen on 0.0.0.0 listens on that address.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RawClient } from './dry-run.js';
import type { KubeCluster } from './start-cluster.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface ContainerSpec {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  env?: EnvVar[];
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  ports?: { name?: string; containerPort: number }[];
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
}
export interface PodSpec {
  containers: ContainerSpec[];
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
}

interface ImageConfig {
  entrypoint: string[];
  cmd: string[];
  env: Record<string, string>;
  workdir: string;
  /** /usr/local/bin links the Dockerfile makes: name → path under /opt/cubicle. */
  bins: Record<string, string>;
}

/** imageConfig reads what a Dockerfile's final stage gives a container. */
export function imageConfig(component: string): ImageConfig {
  const text = readFileSync(join(root, `images/${component}/Dockerfile`), 'utf8').replace(
    /\\\n/g,
    ' ',
  );
  const lines = text.split('\n').map((l) => l.trim());
  const finalFrom = lines.map((l) => l.startsWith('FROM ')).lastIndexOf(true);
  const final = lines.slice(finalFrom).filter((l) => l && !l.startsWith('#'));
  const json = (op: string) => {
    const line = final.find((l) => l.startsWith(`${op} `));
    return line ? (JSON.parse(line.slice(op.length + 1)) as string[]) : [];
  };
  const env: Record<string, string> = {};
  for (const line of final.filter((l) => l.startsWith('ENV ')))
    for (const pair of line.slice(4).trim().split(/\s+/)) {
      const [k, ...v] = pair.split('=');
      env[k!] = v.join('=');
    }
  const bins: Record<string, string> = {};
  for (const m of text.matchAll(/ln -s \/opt\/cubicle\/(\S+) \/usr\/local\/bin\/(\S+)/g))
    bins[m[2]!] = m[1]!;
  const workdir =
    final
      .filter((l) => l.startsWith('WORKDIR '))
      .at(-1)
      ?.slice(8)
      .trim() ?? '/';
  return { entrypoint: json('ENTRYPOINT'), cmd: json('CMD'), env, workdir, bins };
}

const inCheckout = (path: string) => path.replace(/^\/opt\/cubicle\//, root);

/** componentOf maps an image reference (…/cubicle/api:tag, …/api:tag) to its images/ folder. */
export function componentOf(image: string): string {
  const name = image.split('@')[0]!.split(':')[0]!.split('/').at(-1)!;
  if (!['api', 'worker', 'web'].includes(name))
    throw new Error(`not a Cubicle control-plane image: ${image}`);
  return name;
}

/** argvOf is the process the container runs: ENTRYPOINT (tini dropped: Node handles signals itself) + args or CMD. */
function argvOf(container: ContainerSpec, image: ImageConfig): string[] {
  if (container.command) throw new Error('control-plane containers keep the image ENTRYPOINT');
  const rest = container.args ?? image.cmd;
  const argv = [...image.entrypoint.filter((a) => a !== 'tini' && a !== '--'), ...rest];
  // A bare command name is one of the image's /usr/local/bin links.
  if (argv[0] && image.bins[argv[0]])
    return ['node', inCheckout(`/opt/cubicle/${image.bins[argv[0]]}`), ...argv.slice(1)];
  return argv.map(inCheckout);
}

async function resolveEnv(
  client: RawClient,
  namespace: string,
  vars: EnvVar[],
  podIp: string,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const v of vars) {
    if (v.value !== undefined) env[v.name] = v.value;
    const from = v.valueFrom;
    if (!from) continue;
    const ref = from.secretKeyRef ?? from.configMapKeyRef;
    if (ref) {
      const kind = from.secretKeyRef ? 'secrets' : 'configmaps';
      const answer = await client.request(
        'GET',
        `/api/v1/namespaces/${namespace}/${kind}/${ref.name}`,
      );
      const data = (answer.json as { data?: Record<string, string> } | undefined)?.data ?? {};
      const raw = answer.status === 200 ? data[ref.key] : undefined;
      if (raw === undefined) {
        if (ref.optional) continue;
        throw new Error(
          `${v.name}: ${kind}/${ref.name} key ${ref.key} is missing (the kubelet would not start this container)`,
        );
      }
      env[v.name] = from.secretKeyRef ? Buffer.from(raw, 'base64').toString('utf8') : raw;
    } else if (from.fieldRef) {
      const path = from.fieldRef.fieldPath;
      if (path === 'metadata.namespace') env[v.name] = namespace;
      else if (path === 'status.podIP') env[v.name] = podIp;
      else throw new Error(`${v.name}: fieldRef ${path} is not supported here`);
    }
  }
  return env;
}

export interface RunningPod {
  name: string;
  ip: string;
  child: ChildProcess;
  output(): string;
  /** The container port of `port` (a number or a port name). */
  port(port: string | number): number;
  /** Resolves once the readiness probe answers 200 (throws when the process exits first). */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export interface RunPodOptions {
  cluster: KubeCluster;
  /** Admin access, to read Secrets/ConfigMaps and request tokens as the kubelet does. */
  client: RawClient;
  namespace: string;
  name: string;
  spec: PodSpec;
  ip: string;
}

/** runControlPlanePod starts the Pod's single container as a local process (see the header). */
export async function runControlPlanePod(options: RunPodOptions): Promise<RunningPod> {
  const { client, namespace, spec, ip, cluster } = options;
  if (spec.containers.length !== 1) throw new Error('one container per control-plane Pod');
  const container = spec.containers[0]!;
  const image = imageConfig(componentOf(container.image));
  const server = new URL(cluster.server);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/tmp',
    HOSTNAME: options.name,
    ...image.env,
    KUBERNETES_SERVICE_HOST: server.hostname,
    KUBERNETES_SERVICE_PORT: server.port,
    ...(await resolveEnv(client, namespace, container.env ?? [], ip)),
  };
  // Listening on every address is narrowed to this Pod's own loopback address.
  for (const [k, v] of Object.entries(env)) if (v === '0.0.0.0') env[k] = ip;
  let argv = argvOf(container, image);
  argv = argv.map((a) => (a === '0.0.0.0' ? ip : a));
  if (argv[0] !== 'node') throw new Error(`unexpected command ${argv.join(' ')}`);

  let tokenDir: string | undefined;
  let command = process.execPath;
  let args = argv.slice(1);
  if (spec.automountServiceAccountToken !== false) {
    const account = spec.serviceAccountName ?? 'default';
    const answer = await client.request(
      'POST',
      `/api/v1/namespaces/${namespace}/serviceaccounts/${account}/token`,
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      },
    );
    if (answer.status !== 201)
      throw new Error(`token for ${account}: ${answer.status} ${answer.body}`);
    tokenDir = mkdtempSync(join(tmpdir(), 'cubicle-sa-'));
    writeFileSync(
      join(tokenDir, 'token'),
      (answer.json as { status: { token: string } }).status.token,
    );
    writeFileSync(
      join(tokenDir, 'ca.crt'),
      readFileSync(join(cluster.dir, 'certs', 'apiserver.crt')),
    );
    writeFileSync(join(tokenDir, 'namespace'), namespace);
    // A private mount namespace: a tmpfs over /run (which /var/run points to) holds the mount point.
    const script = [
      'set -e',
      'mount -t tmpfs -o mode=755 tmpfs /run',
      `mkdir -p ${SA_DIR}`,
      `mount --bind "$CUBICLE_SA_SOURCE" ${SA_DIR}`,
      'unset CUBICLE_SA_SOURCE',
      'exec "$@"',
    ].join('\n');
    env.CUBICLE_SA_SOURCE = tokenDir;
    command = 'unshare';
    args = [
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      script,
      'sh',
      process.execPath,
      ...args,
    ];
  }
  mkdirSync(inCheckout(image.workdir), { recursive: true });
  let output = '';
  const child = spawn(command, args, {
    cwd: inCheckout(image.workdir),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  child.once('exit', () => {
    if (tokenDir) rmSync(tokenDir, { recursive: true, force: true });
  });

  const portOf = (port: string | number) => {
    if (typeof port === 'number') return port;
    const found = container.ports?.find((p) => p.name === port);
    if (!found) throw new Error(`no container port named ${port}`);
    return found.containerPort;
  };
  return {
    name: options.name,
    ip,
    child,
    output: () => output,
    port: portOf,
    async ready(timeoutMs = 60_000) {
      const probe = container.readinessProbe?.httpGet;
      if (!probe) throw new Error(`${options.name} has no httpGet readiness probe`);
      const url = `http://${ip}:${portOf(probe.port)}${probe.path}`;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child.exitCode !== null)
          throw new Error(`${options.name} exited with ${child.exitCode}:\n${output.slice(-3000)}`);
        const status = await fetch(url).then(
          (r) => r.status,
          () => 0,
        );
        if (status === 200) return;
        if (Date.now() > deadline)
          throw new Error(`${options.name}: ${url} never answered 200:\n${output.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}
