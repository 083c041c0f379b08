/**
 * DAEMON_NODE_FLAGS are the V8 flags of every Node process that hosts the guest driver: the
 * `child` daemon, the sandbox entry (local backend) and the `cubicle-desktop` launcher itself,
 * whose shebang carries the same list (the image and KubeVirt run the launcher; a test fails
 * when the two differ). Measured on an idle daemon (2 cores under load, 2026-12-01):
 * no flags 90 MB RSS; `--max-semi-space-size=1` 80 MB (a 1 MB young generation: more frequent
 * minor GCs, which the driver's request sizes do not notice); plus `--single-threaded` 73 MB
 * (no V8 worker threads, each with its own malloc arena; GC and compilation run on the main
 * thread, which an idle desktop does not notice and a 1280x800 PNG encode does not either;
 * the screenshot bench under each flag set, JPEG q80 of the display, 3 interleaved runs, p50:
 * 163/126/114 ms with it, 117/154/158 ms without, so a slowdown seen once did not repeat).
 * Rejected: `--optimize-for-size` (-3.7 MB on the whole desktop, but that JPEG encode went to
 * 169/219/216 ms against 96/78/115 ms),
 * `--lite-mode`/`--jitless` (65 MB, but JPEG/PNG encoding in JS runs 7-19x slower),
 * `--max-old-space-size` (no effect on an idle heap of ~21 MB, and a low cap turns a large
 * observe into an out-of-memory crash), MALLOC_ARENA_MAX=1 (nothing on top of single-threaded).
 */
export const DAEMON_NODE_FLAGS = ['--max-semi-space-size=1', '--single-threaded'] as const;

/** daemonNodeArgs is the argument list of a Node process running `script` with the flags. */
export function daemonNodeArgs(script: string): string[] {
  return [...DAEMON_NODE_FLAGS, script];
}
