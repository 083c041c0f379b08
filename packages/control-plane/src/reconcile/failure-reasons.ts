/**
 * The failure reasons the control plane writes itself when it loses track of a sandbox. They
 * say nothing about the pool's image (a worker that died while one started, a desktop killed
 * behind our back), so they never count toward the bad-image pause; every other reason is what
 * the backend answered when it tried to start the image.
 */
export const ControlPlaneFailure = {
  provisionTimedOut: 'provisioning timed out',
  lostByBackend: 'lost by the backend',
  /**
   * Lost after its memory limit killed processes inside it: the tenant's workload outgrew the
   * pool's `memory_mb` (see reportOomKills), which says nothing about the image either.
   */
  oomKilled: 'oom_killed',
  /**
   * A primed app's window went away while the desktop waited warm (checkPrimedDesktops): an app
   * that crashed or was closed on a running desktop, not a desktop that failed to start.
   */
  primedAppExited: 'a primed app exited before the claim',
} as const;

export const CONTROL_PLANE_FAILURES: string[] = Object.values(ControlPlaneFailure);
