// Types for kube-paths.mjs, which the TypeScript test harness imports.
export declare const KUBE_TOOL_VERSIONS: Readonly<{ etcd: string; kubeApiserver: string }>;
export declare const GO_TOOLCHAIN: Readonly<{
  minimum: string;
  version: string;
  module: string;
  moduleVersion: string;
}>;
export interface KubeToolPaths {
  dir: string;
  etcd: string;
  kubeApiserver: string;
  versions: Readonly<{ etcd: string; kubeApiserver: string }>;
}
export declare function kubeToolsDir(env?: Record<string, string | undefined>): string;
export declare function kubeToolPaths(env?: Record<string, string | undefined>): KubeToolPaths;
