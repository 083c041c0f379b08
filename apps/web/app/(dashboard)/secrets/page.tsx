import { api } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';
import { ActionForm } from '../../components/action-form';
import { deleteSecret } from './actions';
import { StoreSecretForm } from './store-secret-form';

export const metadata = { title: 'Secrets · Cubicle' };

const when = (iso: string) => iso.slice(0, 19).replace('T', ' ');

const USABLE_BY = { admins: 'admin keys', members: 'admin and member keys' } as const;

/**
 * The tenant's stored secrets: names, versions, who may use them, when written. Values are
 * write-only in the API, so the page has none to show; claims and runs name a secret to get it.
 */
export default async function SecretsPage() {
  const session = await requireSession();
  const secrets = await api(session, (c) => c.request('listStoredSecrets'));
  const isAdmin = session.role === 'admin';
  return (
    <>
      <h1>Secrets</h1>
      <p className="muted">
        Stored secrets are referenced by name from claims (<code>stored_secrets</code>) and runs (
        <code>secrets</code>). Values are write-only: nothing, here or in the API, shows one again.
      </p>
      {isAdmin ? <StoreSecretForm /> : null}
      {secrets.data.length === 0 ? (
        <p className="muted">No stored secrets.</p>
      ) : (
        <table data-secrets>
          <thead>
            <tr>
              <th>Name</th>
              <th>Version</th>
              <th>Usable by</th>
              <th>Created (UTC)</th>
              <th>Updated (UTC)</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {secrets.data.map((s) => (
              <tr key={s.name} data-secret={s.name}>
                <td className="mono">{s.name}</td>
                <td>{s.version}</td>
                <td data-usable-by={s.usable_by}>{USABLE_BY[s.usable_by]}</td>
                <td className="mono">{when(s.created_at)}</td>
                <td className="mono">{when(s.updated_at)}</td>
                <td>
                  {isAdmin ? (
                    <ActionForm
                      action={deleteSecret}
                      submit="Delete"
                      pending="Deleting…"
                      buttonClass="danger"
                      confirm={`Delete ${s.name} and every version? Claims that received it keep their copy.`}
                    >
                      <input type="hidden" name="name" value={s.name} />
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
