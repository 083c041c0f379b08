import { z } from 'zod';
import { ClaimPathParams } from '../claim.js';
import { Recording } from '../recording.js';
import { binaryBody, defineRoute, type RouteDef } from '../route-def.js';
import { claimChild, readErrors } from './shared.js';

/** RecordingMediaHeaders: one byte range (`bytes=a-b`, `bytes=a-`, `bytes=-n`) or the whole video. */
export const RecordingMediaHeaders = z.object({
  range: z
    .string()
    .max(200)
    .regex(/^bytes=(\d+-\d*|-\d+)$/, 'one range: bytes=a-b, bytes=a- or bytes=-n')
    .optional(),
});

/** Recordings: a claim's video and its playable stream. */
export const recordingRoutes = {
  getClaimRecording: defineRoute({
    operationId: 'getClaimRecording',
    method: 'GET',
    path: claimChild('recording'),
    tag: 'recordings',
    auth: 'api_key',
    summary: "The claim's video recording: state, segments, duration, size and URLs",
    description:
      "404 `not_found` when the claim was not recorded (its pool's `recording` and the claim's own left it off) or its recording was deleted by retention. Media time 0 is `started_at`: an event at wall-clock time T is at (T − started_at) seconds in the video.",
    params: ClaimPathParams,
    responses: { 200: Recording },
    errors: [...readErrors],
  }),
  getClaimRecordingMedia: defineRoute({
    operationId: 'getClaimRecordingMedia',
    method: 'GET',
    path: claimChild('recording/media'),
    tag: 'recordings',
    auth: 'api_key',
    summary: 'The video so far as one fragmented MP4 (H.264), with Range requests',
    description:
      'Plays in a `<video>` element and seeks with Range requests (206, `Accept-Ranges: bytes`). A live recording grows: `Content-Length` is what is stored at the time of the request. A range past the end is 416 `range_not_satisfiable`.',
    params: ClaimPathParams,
    headers: RecordingMediaHeaders,
    responses: { 200: binaryBody('video/mp4'), 206: binaryBody('video/mp4') },
    errors: [...readErrors, 'range_not_satisfiable'],
  }),
} satisfies Record<string, RouteDef>;
