// Types for stop-desktops.mjs, which the TypeScript tests import.
export declare function stopInstallationDesktops(
  root: string,
  databaseUrl: string,
): Promise<number>;
