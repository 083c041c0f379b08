// Types for python-tests.mjs, which the TypeScript tests import.
export interface TestCounts {
  passed: number;
  failed: number;
  skipped: number;
}
export declare function countJunit(xml: string): TestCounts;
export declare function runPythonTests(
  root: string,
  options?: { log?: (line: string) => void; args?: string[] },
): Promise<TestCounts & { code: number }>;
