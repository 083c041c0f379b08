/** Shown while a dashboard page loads its data from the API. */
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
