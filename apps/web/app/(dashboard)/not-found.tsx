import Link from 'next/link';

/** Unknown ids (including another tenant's, which the API answers 404) land here. */
export default function NotFound() {
  return (
    <div className="card">
      <h1>Not found</h1>
      <p className="muted">Nothing with that id exists for this tenant.</p>
      <Link href="/claims">Back to claims</Link>
    </div>
  );
}
