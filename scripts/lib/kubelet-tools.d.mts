// Types of kubelet-tools.mjs for the TypeScript test harness (test/harness/kube/real-node).
export declare const NODE_TOOLS: readonly [
  'kubelet',
  'kube-scheduler',
  'kube-controller-manager',
  'kube-proxy',
];
export type NodeToolPaths = Record<(typeof NODE_TOOLS)[number], string>;
export declare function nodeToolPaths(env?: Record<string, string | undefined>): NodeToolPaths;
export declare function isNodeToolReady(bin: string): boolean;
export declare function ensureNodeTools(options?: {
  log?: (line: string) => void;
}): Promise<NodeToolPaths>;
export declare function waitForNodeTools(options?: { log?: (line: string) => void }): Promise<void>;
