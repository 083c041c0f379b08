// The guest driver: the daemon inside every sandbox (guest protocol v1) and the desktop launcher
// that the local backend and the tests use to start complete desktop sessions.
export { GuestEnv, loadGuestEnv } from './env.js';
export { buildGuestApp, type GuestDeps } from './server/app.js';
export {
  startDesktop,
  type DesktopOptions,
  type SandboxNetworkOptions,
  type DesktopPids,
  type DesktopSession,
  sessionDir,
} from './desktop/start-desktop.js';
export { listDesktopIds, listLiveDesktopIds, stopDesktopById } from './desktop/find-desktops.js';
export { EGRESS_CA_PATH, SANDBOX_PATHS, SANDBOX_USER } from './desktop/sandbox-spec.js';
export { sandboxOutputTail, sandboxResourceEvents } from './desktop/sandbox-resources.js';
export { sweepEmptySandboxCgroups } from './desktop/sandbox-cgroup-sweep.js';
export {
  isSandboxPaused,
  pauseSandbox,
  resumeSandbox,
  SandboxFreezeUnsupported,
} from './desktop/pause-sandbox.js';
export type { SandboxResourceEvents } from './desktop/sandbox-cgroup.js';
export { superviseVnc, type VncSupervisor } from './vnc/supervise-vnc.js';
