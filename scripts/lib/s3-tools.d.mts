// Types of s3-tools.mjs for the TypeScript test harness (test/harness/s3-server.ts).
export declare const VERSITYGW_VERSION: string;
export declare function versitygwPath(env?: Record<string, string | undefined>): string;
export declare function isVersitygwReady(bin: string): boolean;
export declare function ensureVersitygw(options?: {
  log?: (line: string) => void;
}): Promise<string>;
