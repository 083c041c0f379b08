// Types for port-owner.mjs, which the TypeScript tests import.
export interface PortOwner {
  pid: number | undefined;
  command: string;
}
export declare function portOwner(port: number | string): PortOwner | undefined;
export declare function describeOwner(owner: PortOwner): string;
export declare function portInUseMessage(
  port: number | string,
  owner: PortOwner,
  variable: string,
): string;
