import { ApiError, api } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';
import { ActionForm } from '../../components/action-form';
import { saveEmbedOrigins } from './actions';

export const metadata = { title: 'Embedding · Cubicle' };

export default async function SettingsPage() {
  const session = await requireSession();
  let origins: string[] | ApiError;
  try {
    origins = (await api(session, (c) => c.tenant.get())).embed_origins ?? [];
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    origins = error;
  }
  return (
    <>
      <h1>Embedding</h1>
      <p className="muted">
        Sites allowed to show view-only live views in an iframe (CSP <code>frame-ancestors</code>).
        With none listed, only this dashboard may frame them.
      </p>
      {origins instanceof ApiError ? (
        <p className="alert">Tenant settings are not available: {origins.message}</p>
      ) : (
        <ActionForm
          action={saveEmbedOrigins}
          submit="Save"
          pending="Saving…"
          className="stack"
          buttonClass="primary"
        >
          <label>
            Origins, one per line (e.g. https://app.example.com)
            <textarea
              name="origins"
              rows={6}
              defaultValue={origins.join('\n')}
              disabled={session.role !== 'admin'}
            />
          </label>
        </ActionForm>
      )}
    </>
  );
}
