import { RunStatus } from '@cubicle/contract/api';
import Link from 'next/link';
import { api } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';
import { AutoRefresh } from '../../components/auto-refresh';

export const metadata = { title: 'Runs · Cubicle' };

const when = (iso: string | null) => (iso ? iso.slice(0, 19).replace('T', ' ') : '—');

/** The tenant's runs across claims, newest first, with a status filter and older pages. */
export default async function RunsPage({
  searchParams,
}: {
  searchParams: Promise<{ status?: string; cursor?: string }>;
}) {
  const session = await requireSession();
  const query = await searchParams;
  const status = RunStatus.safeParse(query.status);
  const runs = await api(session, (c) =>
    c.request('listRuns', {
      query: {
        limit: 50,
        ...(status.success ? { status: status.data } : {}),
        ...(query.cursor ? { cursor: query.cursor } : {}),
      },
    }),
  );
  const filter = status.success ? status.data : null;
  const pageOf = (s: string | null, cursor?: string) => {
    const params = new URLSearchParams();
    if (s) params.set('status', s);
    if (cursor) params.set('cursor', cursor);
    const text = params.toString();
    return text ? `/runs?${text}` : '/runs';
  };
  return (
    <>
      <AutoRefresh seconds={5} />
      <h1>Runs</h1>
      <nav className="span-picker" aria-label="Status">
        <a href={pageOf(null)} aria-current={filter === null ? 'page' : undefined}>
          all
        </a>
        {RunStatus.options.map((s) => (
          <a key={s} href={pageOf(s)} aria-current={filter === s ? 'page' : undefined}>
            {s}
          </a>
        ))}
      </nav>
      {runs.data.length === 0 ? (
        <p className="muted">
          No {filter ?? ''} runs. Start one from a claim&apos;s page or with{' '}
          <code>POST /v1/claims/&#123;id&#125;/runs</code>.
        </p>
      ) : (
        <table data-runs>
          <thead>
            <tr>
              <th>Run</th>
              <th>Claim</th>
              <th>Command</th>
              <th>Status</th>
              <th>Exit</th>
              <th>Created (UTC)</th>
            </tr>
          </thead>
          <tbody>
            {runs.data.map((r) => (
              <tr key={r.id} data-run={r.id} data-status={r.status}>
                <td>
                  <Link href={`/runs/${r.id}`} className="mono">
                    {r.id}
                  </Link>
                </td>
                <td>
                  <Link href={`/claims/${r.claim_id}`} className="mono">
                    {r.claim_id}
                  </Link>
                </td>
                <td className="mono">{r.argv.join(' ').slice(0, 80)}</td>
                <td>
                  <span className={`badge ${r.status === 'succeeded' ? 'success' : r.status}`}>
                    {r.status}
                  </span>
                  {r.end_reason && r.end_reason !== 'exited' ? (
                    <div className="muted">{r.end_reason}</div>
                  ) : null}
                </td>
                <td className="mono">{r.exit_code ?? '—'}</td>
                <td className="mono">{when(r.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p>
        {query.cursor ? (
          <Link href={pageOf(filter)} style={{ marginRight: '1rem' }}>
            ← Newest
          </Link>
        ) : null}
        {runs.next_cursor ? <Link href={pageOf(filter, runs.next_cursor)}>Older →</Link> : null}
      </p>
    </>
  );
}
