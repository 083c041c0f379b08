// Types for supervise.mjs, which the TypeScript tests import.
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}
export interface ProcessHandle {
  pid: number;
  exited: Promise<ProcessExit>;
  stop(): Promise<void>;
  logTail?(lines?: number): string[];
}
export interface RestartPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  maxRestarts: number;
  windowMs: number;
}
export declare const RESTART_POLICY: RestartPolicy;
export declare function restartDelayMs(policy: RestartPolicy, n: number): number;
export interface SupervisedProcess {
  readonly pid: number;
  readonly restarts: number;
  readonly exited: Promise<ProcessExit>;
  logTail(lines?: number): string[];
  stop(): Promise<void>;
}
export declare function superviseProcess(options: {
  name: string;
  first: ProcessHandle;
  start: () => Promise<ProcessHandle>;
  policy?: RestartPolicy;
  log: (line: string) => void;
  onRestart?: (next: ProcessHandle) => void;
  onGiveUp: (reason: string) => void;
}): SupervisedProcess;
