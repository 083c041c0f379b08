'use client';

import { useState } from 'react';

/**
 * Thumbnail shows the screenshot an action was aimed at, linked to the full image. The API
 * keeps only some (not for claims holding secrets, not past 7 days, not one a newer screenshot
 * of its window replaced before any action quoted it): a missing one says so instead of
 * showing a broken image.
 */
export function Thumbnail({ claimId, screenshotId }: { claimId: string; screenshotId: string }) {
  const [isMissing, setMissing] = useState(false);
  const href = `/claims/${claimId}/screenshots/${screenshotId}`;
  if (isMissing)
    return <span className="muted thumb-missing"> (screenshot {screenshotId} not kept)</span>;
  return (
    <a href={href} target="_blank" rel="noreferrer" className="thumb">
      {/* A plain img: next/image would re-encode a private, session-bound image server-side. */}
      <img
        src={href}
        alt={`Screenshot ${screenshotId} the action was aimed at`}
        width={160}
        loading="lazy"
        data-screenshot-id={screenshotId}
        onError={() => setMissing(true)}
      />
    </a>
  );
}
