import { api } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';
import { ActionForm } from '../../components/action-form';
import { revokeKey } from './actions';
import { CreateKeyForm } from './create-key-form';

export const metadata = { title: 'API keys · Cubicle' };

export default async function ApiKeysPage() {
  const session = await requireSession();
  if (session.role !== 'admin')
    return <p className="alert">Only admin keys can manage API keys.</p>;
  const keys = await api(session, (c) => c.request('listApiKeys', { query: { limit: 200 } }));
  return (
    <>
      <h1>API keys</h1>
      <CreateKeyForm />
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Prefix</th>
            <th>Role</th>
            <th>Created</th>
            <th>Last used</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {keys.data.map((key) => (
            <tr key={key.id} data-key={key.prefix}>
              <td>{key.name}</td>
              <td className="mono">{key.prefix}…</td>
              <td>{key.role}</td>
              <td className="mono">{key.created_at.slice(0, 16).replace('T', ' ')}</td>
              <td className="mono">{key.last_used_at?.slice(0, 16).replace('T', ' ') ?? '—'}</td>
              <td>
                {key.revoked_at ? (
                  <span className="badge failure">revoked</span>
                ) : key.prefix === session.keyPrefix ? (
                  <span className="muted">this session</span>
                ) : (
                  <ActionForm
                    action={revokeKey}
                    submit="Revoke"
                    pending="Revoking…"
                    buttonClass="danger"
                    confirm={`Revoke ${key.name}? Clients using it stop working.`}
                  >
                    <input type="hidden" name="key" value={key.id} />
                  </ActionForm>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
