import { embedHtml } from '../tickets/embed-html.js';

/**
 * replayEmbedHtml is the iframe of a replay page: the live view's markup (sandboxed, no referrer,
 * lazy) with its own title; the page plays video, so the same 16:10 frame fits.
 */
export function replayEmbedHtml(replayUrl: string): string {
  return embedHtml(replayUrl, 'view').replace(
    'title="Live desktop (view only)"',
    'title="Desktop replay"',
  );
}
