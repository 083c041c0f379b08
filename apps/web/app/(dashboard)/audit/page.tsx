import type { AuditEvent } from '@cubicle/contract/api';
import Link from 'next/link';
import { api } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';

export const metadata = { title: 'Audit log · Cubicle' };

function actorOf(event: AuditEvent): string {
  switch (event.actor.type) {
    case 'api_key':
      return `${event.actor.key_prefix}…`;
    case 'system':
      return `system (${event.actor.component})`;
    case 'operator':
      return 'operator';
    default:
      return event.actor satisfies never;
  }
}

export default async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<{ cursor?: string }>;
}) {
  const session = await requireSession();
  if (session.role !== 'admin')
    return <p className="alert">Only admin keys can read the audit log.</p>;
  const { cursor } = await searchParams;
  const events = await api(session, (c) =>
    c.request('listAuditEvents', { query: { limit: 50, ...(cursor ? { cursor } : {}) } }),
  );
  return (
    <>
      <h1>Audit log</h1>
      {events.data.length === 0 ? (
        <p className="muted">Nothing recorded yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>When (UTC)</th>
              <th>Actor</th>
              <th>Action</th>
              <th>Target</th>
              <th>Result</th>
            </tr>
          </thead>
          <tbody>
            {events.data.map((e) => (
              <tr key={e.id} data-action={e.action}>
                <td className="mono">{e.created_at.slice(0, 19).replace('T', ' ')}</td>
                <td className="mono">{actorOf(e)}</td>
                <td className="mono">{e.action}</td>
                <td className="mono" data-target-type={e.target_type}>
                  {/* The id, with its type beside it: a type is never shown as the target. */}
                  {e.target_id ?? '—'} <span className="muted">{e.target_type}</span>
                </td>
                <td>
                  <span className={`badge ${e.result}`}>{e.result}</span>{' '}
                  {e.status_code ? <span className="muted">{e.status_code}</span> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p>
        {cursor ? (
          <Link href="/audit" style={{ marginRight: '1rem' }}>
            ← Newest
          </Link>
        ) : null}
        {events.next_cursor ? (
          <Link href={`/audit?cursor=${encodeURIComponent(events.next_cursor)}`}>Older →</Link>
        ) : null}
      </p>
    </>
  );
}
