'use client';

/** A failure while rendering the embed page: the same plain message frame as the other states. */
export default function EmbedError() {
  return (
    <main className="embed" data-state="unavailable">
      <div className="embed-message" role="status">
        <h1>Unavailable</h1>
        <p>The live view cannot be shown right now.</p>
      </div>
    </main>
  );
}
