import Link from 'next/link';

/**
 * The dashboard's 404: unknown paths, and unknown ids (including another tenant's, which the API
 * answers 404), inside the shell so the navigation stays at hand.
 */
export default function NotFound() {
  return (
    <div className="card" data-testid="not-found">
      <h1>Not found</h1>
      <p className="muted">
        There is no page at this address, or nothing with that id exists for this tenant.
      </p>
      <Link href="/pools">Back to pools</Link>
    </div>
  );
}
