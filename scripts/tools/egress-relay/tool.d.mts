// Types of tool.mjs for the TypeScript tests (test/integration/egress-point.test.ts).
export declare function egressRelayVersion(): string;
export declare function egressRelayPath(env?: Record<string, string | undefined>): string;
export declare function egressRelayLink(env?: Record<string, string | undefined>): string;
export declare function isEgressRelayReady(bin: string): boolean;
export declare function ensureEgressRelay(options?: {
  log?: (line: string) => void;
  /** false: leave the shared link alone (tests, benches). */
  link?: boolean;
}): Promise<string>;
