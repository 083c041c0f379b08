import { notFound } from 'next/navigation';
import { ApiError } from '../../../../lib/api/client';
import { poolInsights } from '../../../../lib/api/usage';
import { requireSession } from '../../../../lib/session/current';
import { AutoRefresh } from '../../../components/auto-refresh';
import { LineChart } from '../../../components/charts/line-chart';
import { StackedBarChart } from '../../../components/charts/stacked-bar-chart';
import { formatHours, formatMs } from '../../../components/charts/format';

export const metadata = { title: 'Pool insights · Cubicle' };

const STATES = ['claimed', 'warm', 'provisioning'] as const;

/** Latencies in ms on the axis: ms below two seconds, then s. */
const MS_UNITS = [
  { name: 'ms', size: 1 },
  { name: 's', size: 1000 },
] as const;

export default async function PoolInsightsPage({
  params,
  searchParams,
}: {
  params: Promise<{ name: string }>;
  searchParams: Promise<{ window?: string }>;
}) {
  const { name } = await params;
  const window = (await searchParams).window === 'day' ? 'day' : 'hour';
  const session = await requireSession();
  let insights;
  try {
    insights = await poolInsights(session, name, window);
  } catch (error) {
    if (error instanceof ApiError && (error.status === 404 || error.status === 400)) notFound();
    throw error;
  }
  const time = (iso: string) => iso.slice(11, 16);
  return (
    <>
      <AutoRefresh seconds={30} />
      <h1>
        Pool <span className="mono">{insights.pool}</span>
      </h1>
      <nav className="span-picker" aria-label="Window">
        <a
          href={`/pools/${name}?window=hour`}
          aria-current={window === 'hour' ? 'page' : undefined}
        >
          Last hour
        </a>
        <a href={`/pools/${name}?window=day`} aria-current={window === 'day' ? 'page' : undefined}>
          Last day
        </a>
      </nav>
      {insights.hints.map((hint) => (
        <p key={hint.kind} className="alert" role="status" data-hint={hint.kind}>
          {hint.message}
        </p>
      ))}
      <StackedBarChart
        id="pool-states"
        title={`Desktops by state, last ${window} (UTC, average per ${window === 'hour' ? 'minute' : '15 minutes'})`}
        description={`Average number of claimed, warm and provisioning desktops of pool ${insights.pool} in each ${window === 'hour' ? 'minute' : '15 minutes'} from ${insights.from} to ${insights.to}.`}
        categories={insights.samples.map((s) => time(s.at))}
        series={STATES.map((state) => ({
          name: state,
          values: insights.samples.map((s) => s[state]),
        }))}
        format={(v) => String(Math.round(v * 100) / 100)}
        labelEvery={window === 'hour' ? 10 : 8}
      />
      <LineChart
        id="pool-latency"
        title={`Claim wait and time to first confirmed action, last ${window} (UTC, p50 / p99 per ${window === 'hour' ? 'minute' : '15 minutes'})`}
        description={`For the claims of pool ${insights.pool} activated in each ${window === 'hour' ? 'minute' : '15 minutes'} from ${insights.from} to ${insights.to}: how long they waited for a desktop and how long from the claim to its first action confirmed to have worked, p50 and p99; gaps where no claim was activated or none acted.`}
        categories={insights.latency.map((b) => time(b.at))}
        series={[
          { name: 'claim wait p50', values: insights.latency.map((b) => b.wait_p50_ms) },
          { name: 'claim wait p99', values: insights.latency.map((b) => b.wait_p99_ms) },
          {
            name: 'first confirmed action p50',
            values: insights.latency.map((b) => b.first_action_p50_ms),
          },
          {
            name: 'first confirmed action p99',
            values: insights.latency.map((b) => b.first_action_p99_ms),
          },
        ]}
        format={(v) => formatMs(v)}
        units={MS_UNITS}
        labelEvery={window === 'hour' ? 10 : 8}
      />
      <dl className="stats" data-insights>
        <dt>Claims activated</dt>
        <dd data-stat="claims">{insights.claims}</dd>
        <dt>Claims that waited for a desktop</dt>
        <dd data-stat="waited">{insights.waited_claims}</dd>
        <dt>Claim wait p50 / p99</dt>
        <dd data-stat="wait">
          {formatMs(insights.wait_p50_ms)} / {formatMs(insights.wait_p99_ms)}
        </dd>
        <dt>Claims that reached a confirmed action</dt>
        <dd data-stat="first-actions">{insights.first_actions}</dd>
        <dt>Time to first confirmed action p50 / p99</dt>
        <dd data-stat="first-action">
          {formatMs(insights.first_action_p50_ms)} / {formatMs(insights.first_action_p99_ms)}
        </dd>
        <dt>Warm (idle) desktop time</dt>
        <dd data-stat="warm">{formatHours(insights.warm_seconds)}</dd>
      </dl>
      <h2>Why claims ended</h2>
      {insights.releases.length === 0 ? (
        <p className="muted">No claim ended in this window.</p>
      ) : (
        <table data-releases>
          <tbody>
            {insights.releases.map((r) => (
              <tr key={r.reason}>
                <th scope="row">{r.reason}</th>
                <td>{r.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Failures</h2>
      {insights.failures.length === 0 ? (
        <p className="muted">No desktop failed in this window.</p>
      ) : (
        <table data-failures>
          <tbody>
            {insights.failures.map((f) => (
              <tr key={f.reason}>
                <th scope="row">{f.reason}</th>
                <td>{f.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
