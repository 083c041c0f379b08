// Issue 30 §2, "an OOM kills inside the sandbox only and is reported", through the real stack:
// the API, the worker process and its local backend (real sandboxed desktops in cgroups). The
// claim holder sees the kills on the claim's sandbox, the operator in the audit log, and both as
// a signed `sandbox.oom_killed` webhook; a desktop that dies of it fails with `oom_killed`.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { desktopIdOf, localBackendScope } from '@cubicle/backends';
import { WebhookPayload, WebhookWithSecret } from '@cubicle/contract/api';
import { sessionDir } from '@cubicle/driver-guest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitFor, type Stack } from './support/stack.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const MEMORY_MB = 384;
// Touches twice the pool's memory: the kernel's OOM killer ends it inside the sandbox.
const HOG = `python3 -c "b = b'x' * (${MEMORY_MB * 2} << 20)"`;

describe.skipIf(process.arch !== 'x64' || process.getuid?.() !== 0)(
  'an OOM kill inside a claimed sandbox is reported',
  () => {
    let s: Stack;
    let recv: WebhookReceiver;
    let secret: string;
    const call = (method: string, url: string, payload?: unknown) =>
      s.api.inject({
        method: method as 'GET',
        url,
        headers: s.auth,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const shell = async (claimId: string, command: string) =>
      (await call('POST', `/v1/claims/${claimId}/shell`, { command })).json();
    const hooksOf = (type: string, sandboxId: string) => (w: WebhookReceiver['received'][number]) =>
      w.payload.type === type && w.payload.data.sandbox_id === sandboxId;
    const claimWarm = async () => {
      await waitFor(
        async () => (await call('GET', '/v1/pools/small')).json().counts.warm >= 1,
        120_000,
        250,
      );
      const claim = (await call('POST', '/v1/pools/small/claims', {})).json();
      expect(claim.status).toBe('active');
      return claim as { id: string; sandbox: { id: string; oom_kills: number } };
    };

    beforeAll(async () => {
      s = await startStack({ backend: 'local' });
      recv = await startWebhookReceiver();
      const created = await call('POST', '/v1/webhooks', {
        url: recv.url,
        events: ['sandbox.oom_killed', 'sandbox.failed'],
      });
      expect(created.statusCode, created.body).toBe(201);
      ({ secret } = WebhookWithSecret.parse(created.json()));
      const put = await call('PUT', '/v1/pools/small', {
        ...s.backend.pool,
        memory_mb: MEMORY_MB,
        autoscaling: { min: 0, initial: 1, max: 2 },
      });
      expect(put.statusCode, put.body).toBe(201);
    });
    afterAll(async () => {
      await recv?.close();
      await s?.close();
    });

    it('is killed inside, shown on the claim, in the audit log and as sandbox.oom_killed; the desktop lives', async () => {
      const claim = await claimWarm();
      expect(claim.sandbox.oom_kills).toBe(0);
      const hog = await shell(claim.id, HOG);
      expect(hog.exit_code).not.toBe(0);

      const [hook] = await recv.waitFor(1, hooksOf('sandbox.oom_killed', claim.sandbox.id), 30_000);
      expect(recv.verify(hook!, secret)).toEqual(WebhookPayload.parse(hook!.payload));
      expect(hook!.payload.data).toMatchObject({
        claim_id: claim.id,
        pool: 'small',
        memory_limit_mb: MEMORY_MB,
        sandbox_failed: false,
      });
      expect(hook!.payload.data.oom_kills).toBeGreaterThanOrEqual(1);

      const after = (await call('GET', `/v1/claims/${claim.id}`)).json();
      expect(after.status).toBe('active');
      expect(after.sandbox).toMatchObject({ state: 'claimed', failure_reason: null });
      expect(after.sandbox.oom_kills).toBe(hook!.payload.data.oom_kills);
      const audit = (await call('GET', '/v1/audit-events?limit=200')).json().data as {
        action: string;
        target_type: string;
        target_id: string;
        actor: unknown;
        details: Record<string, unknown>;
      }[];
      expect(audit.filter((e) => e.action === 'sandbox.oom_killed')).toEqual([
        expect.objectContaining({
          target_type: 'claim',
          target_id: claim.id,
          actor: { type: 'system', component: 'worker' },
          details: expect.objectContaining({
            sandbox_id: claim.sandbox.id,
            memory_limit_mb: MEMORY_MB,
            sandbox_failed: false,
          }),
        }),
      ]);

      // The desktop (its daemon) still answers, and the worker that started it still runs.
      expect((await shell(claim.id, 'echo alive')).stdout).toBe('alive\n');
      expect(() => process.kill(s.worker.pid, 0)).not.toThrow();
      // Reported once: later sweeps (every 2 s here) and the release's destroy add nothing.
      expect((await call('DELETE', `/v1/claims/${claim.id}`)).statusCode).toBe(200);
      await waitFor(
        async () =>
          (await s.db.sandbox.findUnique({ where: { id: claim.sandbox.id } }))?.state === 'deleted',
        60_000,
      );
      expect(recv.received.filter(hooksOf('sandbox.oom_killed', claim.sandbox.id))).toHaveLength(1);
    });

    it('a desktop that dies of it fails with failure_reason oom_killed and ends its claim', async () => {
      const claim = await claimWarm();
      // Make the sandbox's PID 1 the OOM killer's first choice: the kill then ends the sandbox.
      const dir = sessionDir(
        desktopIdOf(localBackendScope(s.workerEnv.DATABASE_URL), claim.sandbox.id),
      );
      const { sandbox } = JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8')) as {
        sandbox: { pid: number };
      };
      writeFileSync(`/proc/${sandbox.pid}/oom_score_adj`, '1000');
      await call('POST', `/v1/claims/${claim.id}/shell`, { command: HOG });

      const [failed] = await recv.waitFor(1, hooksOf('sandbox.failed', claim.sandbox.id), 60_000);
      expect(failed!.payload.data).toMatchObject({ pool: 'small', reason: 'oom_killed' });
      const [oom] = await recv.waitFor(1, hooksOf('sandbox.oom_killed', claim.sandbox.id), 10_000);
      expect(oom!.payload.data.claim_id).toBe(claim.id);
      await waitFor(
        async () => (await call('GET', `/v1/claims/${claim.id}`)).json().status === 'released',
        30_000,
      );
      const ended = (await call('GET', `/v1/claims/${claim.id}`)).json();
      expect(ended.release_reason).toBe('sandbox_failed');
      expect(ended.sandbox).toMatchObject({ failure_reason: 'oom_killed' });
      expect(ended.sandbox.oom_kills).toBeGreaterThanOrEqual(1);
    });
  },
);
