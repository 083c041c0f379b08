import { z } from 'zod';
import { ScreenshotId } from '../guest/screenshot.js';
import { named } from '../registry.js';
import { ClaimId, listOf, listQueryOf, Timestamp, ViewerTicketId } from './common.js';
import { ViewerMode } from './viewer-ticket.js';

/**
 * ViewerConnection is one viewer stream the API admitted for a claim: when it opened and when
 * and why it closed. `disconnected_at` is null while the stream is open — or when the API
 * process ended with it open, so no close was recorded.
 */
export const ViewerConnection = named(
  'ViewerConnection',
  z.strictObject({
    id: z.string().regex(/^\d+$/),
    claim_id: ClaimId,
    ticket_id: ViewerTicketId,
    mode: ViewerMode,
    connected_at: Timestamp,
    disconnected_at: Timestamp.nullable(),
    /** The bridge's close reason (`client_closed`, `revoked`, `expired`, `ended`, …). */
    close_reason: z.string().max(64).nullable(),
  }),
);
export type ViewerConnection = z.infer<typeof ViewerConnection>;

/** Viewer connections page oldest first; the cursor is the last connection's id. */
export const ViewerConnectionQuery = listQueryOf(
  z.string().regex(/^\d{1,19}$/, 'must be a next_cursor from this list'),
);
export type ViewerConnectionQuery = z.infer<typeof ViewerConnectionQuery>;
export const ViewerConnectionList = listOf(ViewerConnection);
export type ViewerConnectionList = z.infer<typeof ViewerConnectionList>;

/** ClaimScreenshotPathParams names one kept screenshot of a claim (an action's `screenshot_id`). */
export const ClaimScreenshotPathParams = z.strictObject({
  id: ClaimId,
  screenshot_id: ScreenshotId,
});
export type ClaimScreenshotPathParams = z.infer<typeof ClaimScreenshotPathParams>;
