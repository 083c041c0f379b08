// containerd (Debian's 1.6, with runc) for the real node: its own config, root, state and socket
// under the node's temp dir, never the system service. Images come from the registry-free build
// (scripts/images/build.mjs) as OCI layouts, imported with `ctr images import`; nothing is
// pulled (the sandbox image is our pause image, Pods use imagePullPolicy Never/IfNotPresent).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Reaper } from '../../../../packages/embedded/src/index.js';
import { spawnClusterProcess, waitUntil, type ClusterProcess } from '../processes.js';
import { sh } from './host.js';

export interface Containerd {
  process: ClusterProcess;
  /** unix socket path */
  socket: string;
  /** `ctr` against this containerd, namespace k8s.io (kubelet's). */
  ctr(args: string[]): Promise<string>;
  /** importLayout streams an OCI layout directory (as a tar) into containerd; returns ms taken. */
  importLayout(layout: string): Promise<number>;
}

/** Where Debian puts runc (1.1.x: /usr/sbin; newer: /usr/bin). */
function runcPath(): string {
  for (const path of ['/usr/sbin/runc', '/usr/bin/runc']) if (existsSync(path)) return path;
  throw new Error('runc is not installed (apt-get install runc containerd; scripts/lib/apt.mjs)');
}

function configToml(dir: string, cniConfDir: string, pauseRef: string): string {
  const q = JSON.stringify;
  return `version = 2
root = ${q(join(dir, 'root'))}
state = ${q(join(dir, 'state'))}
# Only what the CRI needs; no btrfs/zfs/devmapper/aufs probing.
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = ${q(join(dir, 'containerd.sock'))}

[ttrpc]
  address = ${q(join(dir, 'containerd.sock.ttrpc'))}

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(join(dir, 'opt'))}

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${q(pauseRef)}
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  netns_mounts_under_state_dir = true
  enable_selinux = false
  # Root on these VMs lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj below containerd's
  # own, and every sandbox failed ("can't get final child's PID from pipe: EOF") until this.
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = ${q(runcPath())}
        Root = ${q(join(dir, 'runc'))}
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = ${q(cniConfDir)}
    max_conf_num = 1
`;
}

export async function startContainerd(options: {
  dir: string;
  cniConfDir: string;
  pauseRef: string;
  reaper: Reaper;
}): Promise<Containerd> {
  const { dir } = options;
  mkdirSync(dir, { recursive: true });
  const config = join(dir, 'config.toml');
  writeFileSync(config, configToml(dir, options.cniConfDir, options.pauseRef));
  const socket = join(dir, 'containerd.sock');
  const proc = spawnClusterProcess('containerd', '/usr/bin/containerd', ['--config', config], {
    logFile: join(dir, 'containerd.log'),
    cwd: dir,
    reaper: options.reaper,
  });
  const ctr = (args: string[]) =>
    sh('ctr', ['--address', socket, '--namespace', 'k8s.io', ...args]);
  await waitUntil(
    proc,
    'its socket',
    async () => (await ctr(['version'])).includes('Server'),
    30_000,
  );
  return {
    process: proc,
    socket,
    ctr,
    importLayout: (layout) =>
      new Promise((resolve, reject) => {
        const started = performance.now();
        const tar = spawn('tar', ['-C', layout, '-cf', '-', '.'], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const ctrImport = spawn(
          'ctr',
          ['--address', socket, '--namespace', 'k8s.io', 'images', 'import', '-'],
          { stdio: ['pipe', 'pipe', 'pipe'] },
        );
        tar.stdout.pipe(ctrImport.stdin);
        let errors = '';
        ctrImport.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
        tar.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
        ctrImport.once('exit', (code) =>
          code === 0
            ? resolve(performance.now() - started)
            : reject(new Error(`ctr images import ${layout} exited ${code}: ${errors}`)),
        );
      }),
  };
}
