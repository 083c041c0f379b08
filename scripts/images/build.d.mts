// Types of build.mjs for the TypeScript test harness (test/harness/kube/real-node) and bench.
export interface LayerInfo {
  mediaType: string;
  digest: string;
  size: number;
  cached: boolean;
  buildMs?: number;
}
export interface BuiltImage {
  name: string;
  /** localhost/cubicle/<name>:<12 hex of the image's inputs> */
  ref: string;
  /** OCI image layout directory (import with `tar -C layout -c . | ctr images import -`). */
  layout: string;
  manifestDigest: string;
  size: number;
  layers: { debian?: LayerInfo; repository: LayerInfo };
}
export declare const IMAGES: Readonly<
  Record<string, { dockerfile: string; listKey?: string; apps?: readonly string[] }>
>;
export declare function imageConfig(
  name: string,
  repoRoot?: string,
): { packages: string[]; login: { name: string; home: string }; [key: string]: unknown };
export declare const TEST_IMAGES: readonly string[];
export declare function imagesDir(env?: Record<string, string | undefined>): string;
export declare function ensureImages(
  names?: readonly string[],
  options?: { log?: (line: string) => void; debianOnly?: boolean },
): Promise<Record<string, BuiltImage>>;
