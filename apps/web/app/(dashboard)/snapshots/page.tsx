import Link from 'next/link';
import { api } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';
import { ActionForm } from '../../components/action-form';
import { deleteSnapshot } from './actions';

export const metadata = { title: 'Snapshots · Cubicle' };

const when = (iso: string) => iso.slice(0, 19).replace('T', ' ');
const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

/**
 * The tenant's filesystem snapshots: status, what was packed, sizes (of the files, and in
 * brackets of the sealed objects, which the snapshot quota counts), the claim and pool they came
 * from, when retention removes them. An admin may delete one; the forks already made from it
 * keep their files (they are copies in their desktops).
 */
export default async function SnapshotsPage() {
  const session = await requireSession();
  const snapshots = await api(session, (c) =>
    c.request('listSnapshots', { query: { limit: 200 } }),
  );
  const isAdmin = session.role === 'admin';
  return (
    <>
      <h1>Snapshots</h1>
      <p className="muted">
        <code>POST /v1/claims/{'{id}'}/snapshots</code> packs a claim&apos;s home (or the{' '}
        <code>paths</code> it names) into the object store. A <code>ready</code> snapshot forks:{' '}
        <code>POST /v1/pools/{'{name}'}/claims</code> with <code>from_snapshot</code> and an
        optional <code>count</code> gives that many independent claims, each a warm desktop with the
        snapshot&apos;s files restored; a change in one fork is not in the others.
      </p>
      {snapshots.data.length === 0 ? (
        <p className="muted">No snapshots.</p>
      ) : (
        <table data-snapshots>
          <thead>
            <tr>
              <th>Snapshot</th>
              <th>Status</th>
              <th>Paths</th>
              <th>Size (stored)</th>
              <th>Files</th>
              <th>Source claim</th>
              <th>Created (UTC)</th>
              <th>Expires (UTC)</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {snapshots.data.map((s) => (
              <tr key={s.id} data-snapshot={s.id}>
                <td>
                  {s.name ?? '—'}
                  <div className="mono muted">{s.id}</div>
                </td>
                <td data-status={s.status}>{s.status}</td>
                <td className="mono">{s.paths.join(', ')}</td>
                <td>
                  {mib(s.size_bytes)} <span className="muted">({mib(s.stored_bytes)})</span>
                </td>
                <td>{s.file_count}</td>
                <td>
                  <Link className="mono" href={`/claims/${s.source.claim_id}`}>
                    {s.source.claim_id}
                  </Link>{' '}
                  <span className="muted">({s.source.pool})</span>
                </td>
                <td className="mono">{when(s.created_at)}</td>
                <td className="mono">{when(s.expires_at)}</td>
                <td>
                  {isAdmin ? (
                    <ActionForm
                      action={deleteSnapshot}
                      submit="Delete"
                      pending="Deleting…"
                      buttonClass="danger"
                      confirm={`Delete snapshot ${s.name ?? s.id}? Forks already made keep their files.`}
                    >
                      <input type="hidden" name="id" value={s.id} />
                    </ActionForm>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
