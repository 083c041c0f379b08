/**
 * Shown while a dashboard page loads its data from the API. Each page folder's loading.tsx
 * re-exports it rather than one boundary for the whole group: a group-level boundary streams the
 * shell before a page decides, so an unknown path ([...missing]) could only answer 200.
 */
export default function Loading() {
  return (
    <div aria-busy="true" aria-label="Loading">
      <div className="skeleton" style={{ width: '30%' }} />
      <div className="skeleton" />
      <div className="skeleton" />
      <div className="skeleton" style={{ width: '70%' }} />
    </div>
  );
}
