// Types for test-run.mjs, which the TypeScript tests import.
export interface VitestCounts {
  passed: number;
  failed: number;
  skipped: number;
}
export interface VitestFailure {
  file: string;
  name: string;
  message: string;
}
export declare function countResults(report: unknown): VitestCounts;
export declare function failedTests(report: unknown, root?: string): VitestFailure[];
export declare function printFailures(failures: VitestFailure[] | undefined): void;
