import Link from 'next/link';
import { api } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';
import { ActionForm } from '../../components/action-form';
import { deleteProfile } from './actions';

export const metadata = { title: 'Profiles · Cubicle' };

const when = (iso: string | null) => (iso ? iso.slice(0, 19).replace('T', ' ') : '—');
const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
const claimLink = (id: string | null) =>
  id ? (
    <Link className="mono" href={`/claims/${id}`}>
      {id}
    </Link>
  ) : (
    '—'
  );

/**
 * The tenant's persistent profiles: each one's saved version, size and last use, the claim that
 * holds it now. A profile is made by its first claim (`profile` in the claim request); here it
 * can only be deleted, with every stored version, once no claim holds it (the API answers 409
 * `profile_in_use` otherwise, so the button is offered only on free profiles).
 */
export default async function ProfilesPage() {
  const session = await requireSession();
  const profiles = await api(session, (c) => c.request('listProfiles', { query: { limit: 200 } }));
  const isAdmin = session.role === 'admin';
  return (
    <>
      <h1>Profiles</h1>
      <p className="muted">
        A claim with <code>profile</code> gets that profile&apos;s saved home (browser logins,
        Documents) restored into a warm desktop; it is saved back at release and on{' '}
        <code>POST /v1/claims/{'{id}'}/profile/save</code>. One live claim holds a profile at a
        time.
      </p>
      {profiles.data.length === 0 ? (
        <p className="muted">No profiles yet.</p>
      ) : (
        <table data-profiles>
          <thead>
            <tr>
              <th>Id</th>
              <th>Version</th>
              <th>Size</th>
              <th>Files</th>
              <th>Saved (UTC)</th>
              <th>Last used (UTC)</th>
              <th>Held by</th>
              <th>Last claim</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {profiles.data.map((p) => (
              <tr key={p.id} data-profile={p.id}>
                <td className="mono">{p.id}</td>
                <td>{p.version}</td>
                <td>{mib(p.size_bytes)}</td>
                <td>{p.file_count}</td>
                <td className="mono">{when(p.saved_at)}</td>
                <td className="mono">{when(p.last_used_at)}</td>
                <td>{claimLink(p.claim_id)}</td>
                <td>{claimLink(p.last_claim_id)}</td>
                <td>
                  {isAdmin && p.claim_id === null ? (
                    <ActionForm
                      action={deleteProfile}
                      submit="Delete"
                      pending="Deleting…"
                      buttonClass="danger"
                      confirm={`Delete profile ${p.id} and every saved version?`}
                    >
                      <input type="hidden" name="id" value={p.id} />
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
