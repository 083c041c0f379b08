import type { Usage } from '@cubicle/contract/api';
import { tenantUsage, usageSpan } from '../../../lib/api/usage';
import { requireSession } from '../../../lib/session/current';
import { StackedBarChart } from '../../components/charts/stacked-bar-chart';
import { DURATION_UNITS } from '../../components/charts/axis-unit';
import { formatHours } from '../../components/charts/format';

export const metadata = { title: 'Usage · Cubicle' };

const SPANS = [7, 30, 90] as const;

/** usageByPoolAndDay turns usage rows into chart series: one per pool, one value per day. */
function usageByPoolAndDay(usage: Usage, days: string[]) {
  const pools = [...new Set(usage.rows.map((r) => r.pool))].sort();
  return pools.map((pool) => ({
    name: pool,
    values: days.map(
      (day) =>
        usage.rows.find((r) => r.pool === pool && r.period_start?.startsWith(day))?.claim_seconds ??
        0,
    ),
  }));
}

export default async function UsagePage({
  searchParams,
}: {
  searchParams: Promise<{ days?: string }>;
}) {
  const session = await requireSession();
  if (session.role !== 'admin') return <p className="alert">Only admin keys can read usage.</p>;
  const requested = Number((await searchParams).days);
  const days = (SPANS as readonly number[]).includes(requested) ? requested : 30;
  const span = usageSpan(days);
  const usage = await tenantUsage(session, span);
  const dayList = Array.from({ length: days }, (_, i) =>
    new Date(Date.parse(span.from) + i * 86_400_000).toISOString().slice(0, 10),
  );
  const byPool = [...new Set(usage.rows.map((r) => r.pool))].sort().map((pool) => {
    const rows = usage.rows.filter((r) => r.pool === pool);
    const sum = (k: 'claim_seconds' | 'warm_seconds' | 'run_seconds' | 'claims') =>
      rows.reduce((s, r) => s + r[k], 0);
    return {
      pool,
      claims: sum('claims'),
      claim: sum('claim_seconds'),
      warm: sum('warm_seconds'),
      run: sum('run_seconds'),
    };
  });
  return (
    <>
      <h1>Usage</h1>
      <p className="muted">
        Claimed desktop time per pool and UTC day, from the hourly rollup
        {usage.rolled_up_to ? ` (counted up to ${usage.rolled_up_to})` : ' (not run yet)'}.
      </p>
      <nav className="span-picker" aria-label="Time span">
        {SPANS.map((d) => (
          <a key={d} href={`/usage?days=${d}`} aria-current={d === days ? 'page' : undefined}>
            {d} days
          </a>
        ))}
        <a href={`/usage/csv?days=${days}`} download={`cubicle-usage-${days}d.csv`} data-csv>
          Download CSV
        </a>
      </nav>
      <StackedBarChart
        id="usage-by-day"
        title={`Claimed hours by pool, last ${days} days`}
        description={`Stacked bars, one per UTC day, one segment per pool; total ${formatHours(usage.totals.claim_seconds)}.`}
        categories={dayList}
        series={usageByPoolAndDay(usage, dayList)}
        format={formatHours}
        units={DURATION_UNITS}
        labelEvery={days <= 7 ? 1 : days <= 30 ? 5 : 15}
      />
      <table data-usage-totals>
        <thead>
          <tr>
            <th scope="col">Pool</th>
            <th scope="col">Claims</th>
            <th scope="col">Claimed</th>
            <th scope="col">Warm</th>
            <th scope="col">Runs</th>
          </tr>
        </thead>
        <tbody>
          {byPool.map((p) => (
            <tr key={p.pool} data-pool={p.pool}>
              <th scope="row">{p.pool}</th>
              <td>{p.claims}</td>
              <td>{formatHours(p.claim)}</td>
              <td>{formatHours(p.warm)}</td>
              <td>{formatHours(p.run)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr data-total>
            <th scope="row">Total</th>
            <td>{usage.totals.claims}</td>
            <td>{formatHours(usage.totals.claim_seconds)}</td>
            <td>{formatHours(usage.totals.warm_seconds)}</td>
            <td>{formatHours(usage.totals.run_seconds)}</td>
          </tr>
        </tfoot>
      </table>
    </>
  );
}
