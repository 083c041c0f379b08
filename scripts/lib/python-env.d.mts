// Types for python-env.mjs, which the TypeScript tests import.
export declare function ensurePythonEnv(
  root: string,
  options?: { log?: (line: string) => void },
): Promise<string>;
