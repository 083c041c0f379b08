// Types for app-user.mjs, which the TypeScript tests import.
export interface AppUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}
export declare const APP_USER: string;
export declare function lookupUser(name: string): AppUser | undefined;
export declare function canRead(file: string, user: AppUser): boolean;
export declare function appUser(
  root: string,
  log: { log: (line: string) => void; warn: (line: string) => void },
): AppUser | undefined;
