import type { SandboxBackend } from '@cubicle/control-plane';

export interface HollowBackendOptions {
  /** The hollow guest server (startHollowGuests): its URL and admin token. */
  url: string;
  adminToken: string;
}

/**
 * createHollowBackend provisions LOAD-TEST sandboxes on a hollow guest server (hollow-guests.ts):
 * provisioning registers a sandbox id and gets its bearer token back; no desktop starts. The
 * fleet lives in the hollow server, so several worker processes share one view of it (list,
 * destroy). It stands in the `local` slot of a worker started by the scale benchmark or the
 * scale tests (HOLLOW_GUESTS_URL); nothing else configures it.
 */
export function createHollowBackend(options: HollowBackendOptions): SandboxBackend {
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${options.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`hollow guests answered ${res.status} to ${method} ${path}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  return {
    kind: 'local',
    async provision(input) {
      const { token } = (await admin('POST', '/hollow/sandboxes', { id: input.sandboxId })) as {
        token: string;
      };
      return {
        ref: `hollow:${input.sandboxId}`,
        guestUrl: options.url,
        guestToken: token,
        vncEndpoint: null,
      };
    },
    async destroy(sandboxId) {
      await admin('DELETE', `/hollow/sandboxes/${sandboxId}`);
    },
    async list() {
      return ((await admin('GET', '/hollow/sandboxes')) as { ids: string[] }).ids;
    },
  };
}
