import type { ProvisionInput, ProvisionedSandbox, SandboxBackend } from '@cubicle/control-plane';
import { listDesktopIds, startDesktop, stopDesktopById, type DesktopOptions } from '@cubicle/driver-guest';

export interface LocalBackendOptions {
  /** Passed to every desktop (size, GLX); the daemon always runs as its own process. */
  desktop?: Pick<DesktopOptions, 'width' | 'height' | 'depth' | 'withGlx'>;
}

/** Only desktops whose session id is a sandbox id belong to this backend. */
const SANDBOX_ID = /^sbx_[0-9a-z]{26}$/;

/**
 * createLocalBackend runs each sandbox as a desktop session on this machine. The session's id is
 * the sandbox id and every process of it carries that id in its environment, so the backend
 * keeps no state of its own: a restarted worker lists and destroys desktops by sandbox id, and a
 * provisioning re-run after a crash first clears whatever half-started session is left. The
 * guest driver runs as a separate process so desktops outlive a worker restart. The pool's
 * `image` is not used (the desktop is this machine's); its `env` reaches the session's apps.
 */
export function createLocalBackend(options: LocalBackendOptions = {}): SandboxBackend {
  return {
    kind: 'local',
    async provision(input: ProvisionInput): Promise<ProvisionedSandbox> {
      await stopDesktopById(input.sandboxId);
      if (input.signal.aborted) throw new Error('provisioning aborted');
      const session = await startDesktop({
        ...options.desktop,
        id: input.sandboxId,
        daemon: 'child',
        appEnv: input.env,
      });
      if (!session.guestUrl) {
        await session.stop();
        throw new Error('the desktop started without a guest driver');
      }
      return {
        ref: `${session.display}`,
        guestUrl: session.guestUrl,
        guestToken: session.guestToken,
        vncEndpoint: `127.0.0.1:${session.vncPort}`,
      };
    },
    async destroy(sandboxId: string): Promise<void> {
      await stopDesktopById(sandboxId);
    },
    async list(): Promise<string[]> {
      return (await listDesktopIds()).filter((id) => SANDBOX_ID.test(id));
    },
  };
}
