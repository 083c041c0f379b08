// Where the Kubernetes test tools live: built from the Go module proxy by kube-tools.mjs (during
// `npm test`'s bootstrap) into a cache outside the repo, and found there by the test harness
// (test/harness/kube). Plain Node with no dependencies: both sides import this one file.
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The pinned tool versions. kube-apiserver 1.36 is the newest minor whose build we verified here;
 * etcd 3.6 is what Kubernetes 1.34+ expects. Bump both here (and rebuild) together.
 */
export const KUBE_TOOL_VERSIONS = Object.freeze({
  etcd: 'v3.6.16',
  kubeApiserver: 'v1.36.5',
});

/** The Go release used when the machine's `go` is missing or too old (k8s 1.36 needs go 1.26). */
export const GO_TOOLCHAIN = Object.freeze({
  minimum: '1.26.0',
  version: '1.26.8',
  module: 'golang.org/toolchain',
  moduleVersion: 'v0.0.1-go1.26.8.linux-amd64',
});

/**
 * kubeToolsDir is CUBICLE_TOOLS_DIR, else $XDG_CACHE_HOME/cubicle-tools, else
 * ~/.cache/cubicle-tools. Never inside the repo: the binaries are large and machine-specific.
 */
export function kubeToolsDir(env = process.env) {
  if (env.CUBICLE_TOOLS_DIR) return env.CUBICLE_TOOLS_DIR;
  const cache = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'cubicle-tools');
}

/** kubeToolPaths names the binaries for the pinned versions (they may not exist yet). */
export function kubeToolPaths(env = process.env) {
  const dir = kubeToolsDir(env);
  return {
    dir,
    etcd: join(dir, `etcd-${KUBE_TOOL_VERSIONS.etcd}`, 'etcd'),
    kubeApiserver: join(
      dir,
      `kube-apiserver-${KUBE_TOOL_VERSIONS.kubeApiserver}`,
      'kube-apiserver',
    ),
    versions: KUBE_TOOL_VERSIONS,
  };
}
