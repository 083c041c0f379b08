'use client';

/** A page whose API call failed: say so and offer a retry (server messages are not shown verbatim). */
export default function DashboardError({
  error,
  reset,
}: {
  error: Error & { digest?: string };
  reset: () => void;
}) {
  return (
    <div className="alert" role="alert">
      <p>
        <strong>This page could not be loaded.</strong> The API may be unavailable.
        {error.digest ? <span className="muted"> (ref {error.digest})</span> : null}
      </p>
      <button type="button" onClick={reset}>
        Try again
      </button>
    </div>
  );
}
