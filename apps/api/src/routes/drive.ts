import { Routes, type RouteName } from '@cubicle/contract/api';
import {
  GuestRoutes,
  ScreenshotImage,
  warmGuestSchemas,
  type GuestOperation,
} from '@cubicle/contract/guest';
import { GuestCalls, listActions, pauseClaim, resumeClaim } from '@cubicle/control-plane';
import { CheckedJsonBody, route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's guest-call client: its stats() show per-sandbox memory (scale tests). */
    guestCalls?: GuestCalls;
  }
}

/**
 * DriveOperations is the guest operation each forwarding drive route runs. The claim's MCP tools
 * (mcp/mcp-tools.ts) run the same operations through the same GuestCalls, from this table.
 */
export const DriveOperations = {
  observeClaim: 'observe',
  actClaim: 'act.element',
  inputClaim: 'act.pixel',
  verifyClaim: 'verify_state',
  screenshotClaim: 'screenshot',
  runClaimShell: 'shell.run',
  readClaimFile: 'files.read',
  writeClaimFile: 'files.write',
  listClaimFiles: 'files.list',
  statClaimFile: 'files.stat',
  deleteClaimFile: 'files.delete',
  listClaimWindows: 'windows.list',
  launchClaimWindow: 'windows.launch',
  closeClaimWindow: 'windows.close',
} as const satisfies Partial<Record<RouteName, GuestOperation>>;

/**
 * Drive routes: the claim holder's observe / act / input / verify / screenshot / shell / files /
 * windows calls, each forwarded as one guest operation through the sandbox's lane (GuestCalls),
 * and the claim's stored ActionResults. Bodies and answers are the guest protocol's own schemas.
 * Answers come back over Redis pub/sub: one subscriber connection per process, closed with the app.
 */
export const driveRoutes = routeGroup(Plugin.driveRoutes, (app) => {
  const deps = app.resources;
  const { redis, prefix } = app.connections;
  const subscriber = redis.duplicate();
  const guest = new GuestCalls(deps, {
    subscriber,
    prefix,
    onFirstConfirmedAction: (ms) => app.metrics.firstConfirmedAction.observe(ms / 1000),
  });
  app.addHook('onClose', async () => {
    await guest.close();
    subscriber.disconnect();
  });
  app.decorate('guestCalls', guest);
  // The answers' schemas are built now, not inside the first call (warmGuestSchemas).
  setImmediate(() => warmGuestSchemas());
  // Every forwarded answer goes on as the JSON text the worker checked against the guest route's
  // response schema, which is the REST route's own object (CheckedJsonBody): neither parsed,
  // checked nor written again here (route() checks it when the two schemas ever differ). The
  // worker's check is the trust boundary (the guest runs inside the tenant's sandbox); a second
  // one here cost a parse, a check and a write per call (`as never`: the type is the route's).
  // Server-Timing says where the call's time went: the API's enqueue and wait, the lane, and
  // the worker's parts (guest-call-timing.ts).
  const forward =
    (operation: (typeof DriveOperations)[keyof typeof DriveOperations]) =>
    async (input: {
      request: Parameters<typeof tenantOf>[0];
      reply: { header(name: string, value: string): unknown };
      params: { id: string };
      body?: unknown;
    }) => {
      const { json, serverTiming } = await guest.callJson(
        tenantOf(input.request),
        input.params.id,
        operation,
        (input.body ?? {}) as Record<string, unknown>,
      );
      input.reply.header('server-timing', serverTiming);
      return {
        status: 200 as const,
        body: new CheckedJsonBody(json, GuestRoutes[operation].response) as never,
      };
    };

  route(app, Routes.observeClaim, forward(DriveOperations.observeClaim));
  route(app, Routes.actClaim, forward(DriveOperations.actClaim));
  route(app, Routes.inputClaim, forward(DriveOperations.inputClaim));
  route(app, Routes.verifyClaim, forward(DriveOperations.verifyClaim));
  route(app, Routes.screenshotClaim, forward(DriveOperations.screenshotClaim));
  // Pause and resume go down the same lane as the calls (after those queued before them).
  route(app, Routes.pauseClaim, async ({ request, params }) => ({
    status: 200,
    body: await pauseClaim(deps, guest, tenantOf(request), params.id),
  }));
  route(app, Routes.resumeClaim, async ({ request, params }) => ({
    status: 200,
    body: await resumeClaim(deps, guest, tenantOf(request), params.id),
  }));
  route(app, Routes.runClaimShell, forward(DriveOperations.runClaimShell));
  route(app, Routes.readClaimFile, forward(DriveOperations.readClaimFile));
  route(app, Routes.writeClaimFile, forward(DriveOperations.writeClaimFile));
  route(app, Routes.listClaimFiles, forward(DriveOperations.listClaimFiles));
  route(app, Routes.statClaimFile, forward(DriveOperations.statClaimFile));
  route(app, Routes.deleteClaimFile, forward(DriveOperations.deleteClaimFile));
  route(app, Routes.listClaimWindows, forward(DriveOperations.listClaimWindows));
  route(app, Routes.launchClaimWindow, forward(DriveOperations.launchClaimWindow));
  route(app, Routes.closeClaimWindow, forward(DriveOperations.closeClaimWindow));

  // The same capture as POST /screenshot, answered as the PNG file itself (`curl -o desktop.png`).
  route(app, Routes.getClaimScreenshot, async ({ request, params, query }) => {
    const answer = ScreenshotImage.parse(
      await guest.call(tenantOf(request), params.id, 'screenshot', {
        format: 'png',
        ...(query.window_id !== undefined ? { window_id: query.window_id } : {}),
        ...(query.max_dimension !== undefined ? { max_dimension: query.max_dimension } : {}),
      }),
    );
    return { status: 200, body: Buffer.from(answer.data, 'base64') };
  });

  route(app, Routes.listClaimActions, async ({ request, params, query }) => ({
    status: 200,
    body: await listActions(deps, tenantOf(request), params.id, query),
  }));
}, [Plugin.metrics]);
