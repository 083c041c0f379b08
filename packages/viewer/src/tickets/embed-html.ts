import type { ViewerMode } from '@cubicle/contract/api';

const escapeAttr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * embedHtml is the iframe a customer pastes into their page. `sandbox` keeps the viewer from
 * navigating or opening windows on the host page (scripts and its own origin are what the
 * viewer needs to open its stream); `allow` grants fullscreen only; no referrer leaves the
 * frame's request. The size is the desktop's; the viewer scales to whatever the frame is.
 */
export function embedHtml(viewerUrl: string, mode: ViewerMode): string {
  const title = mode === 'view' ? 'Live desktop (view only)' : 'Live desktop';
  return (
    `<iframe src="${escapeAttr(viewerUrl)}" title="${title}" width="1280" height="800" ` +
    `style="border:0;max-width:100%;aspect-ratio:16/10;height:auto" ` +
    `sandbox="allow-scripts allow-same-origin" allow="fullscreen" ` +
    `referrerpolicy="no-referrer" loading="lazy"></iframe>`
  );
}
