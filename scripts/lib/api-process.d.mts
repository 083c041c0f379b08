// Types for api-process.mjs, which the TypeScript tests import.
import type { ProcessExit, ProcessHandle } from './supervise.mjs';
export declare class PortInUseError extends Error {}
export interface AppProcess extends ProcessHandle {
  startTime: string | undefined;
  logFile: string;
  logTail(lines?: number): string[];
}
export declare function spawnApp(options: {
  root: string;
  name: string;
  entry: string;
  args?: string[];
  env: Record<string, string | undefined>;
  logDir: string;
  embedded: unknown;
  /** Run as this account (uid, gid; no supplementary groups). */
  user?: { uid: number; gid: number };
}): AppProcess;
export declare function waitHealthy(
  url: string,
  exited: Promise<ProcessExit>,
  timeoutMs?: number,
  owner?: { port: number | string; pid: number; variable: string },
): Promise<void>;
