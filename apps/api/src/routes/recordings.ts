import { Routes } from '@cubicle/contract/api';
import { getRecording, openRecordingMedia } from '@cubicle/control-plane';
import type { Authenticate } from '../auth/authenticate.js';
import { route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';

/**
 * One answer's most bytes. An open range (`bytes=N-`, what players send) gets at most this much
 * (a 206 may be shorter than asked; players ask again from where it ended), so a long video is
 * never held in memory whole; an explicit range or a whole-file GET gets exactly what it asked.
 */
const OPEN_RANGE_MAX_BYTES = 8 * 1024 * 1024;

export interface RecordingRoutesOptions {
  /** Who may read (the replay plugin's link-or-key authenticator); default: API keys. */
  authenticate?: (app: Parameters<typeof route>[0]) => Authenticate;
}

/** A claim's video recording and its media stream (fragmented MP4 with Range requests). */
export const recordingRoutes = routeGroup<RecordingRoutesOptions>(
  Plugin.recordingRoutes,
  (app, options) => {
    const deps = app.resources;
    const routeOptions = options.authenticate ? { authenticate: options.authenticate(app) } : {};

    route(
      app,
      Routes.getClaimRecording,
      async ({ request, params, reply }) => {
        reply.header('cache-control', 'private, no-store');
        return { status: 200, body: await getRecording(deps, tenantOf(request), params.id) };
      },
      routeOptions,
    );

    route(
      app,
      Routes.getClaimRecordingMedia,
      async ({ request, params, headers, reply }) => {
        const range = capOpenRange(headers.range);
        const media = await openRecordingMedia(deps, tenantOf(request), params.id, range);
        const chunks: Buffer[] = [];
        for await (const chunk of media.body) chunks.push(Buffer.from(chunk));
        // Pixels may show anything the desktop showed: no shared cache may keep them.
        reply.header('cache-control', 'private, no-cache');
        reply.header('accept-ranges', 'bytes');
        if (media.status === 206)
          reply.header('content-range', `bytes ${media.start}-${media.end}/${media.size}`);
        return { status: media.status, body: Buffer.concat(chunks) };
      },
      routeOptions,
    );
  },
);

/** capOpenRange bounds `bytes=N-` to OPEN_RANGE_MAX_BYTES; other forms pass unchanged. */
export function capOpenRange(range: string | undefined): string | undefined {
  const open = range && /^bytes=(\d+)-$/.exec(range);
  if (!open) return range;
  const start = Number(open[1]);
  return `bytes=${start}-${start + OPEN_RANGE_MAX_BYTES - 1}`;
}
