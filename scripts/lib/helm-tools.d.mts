// Types of helm-tools.mjs for the TypeScript test harness (test/harness/kube/helm.ts).
export declare const HELM_VERSION: string;
export declare function helmPath(env?: Record<string, string | undefined>): string;
export declare function isHelmReady(bin: string): boolean;
export declare function ensureHelm(options?: { log?: (line: string) => void }): Promise<string>;
