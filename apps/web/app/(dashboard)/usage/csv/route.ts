import { usageToCsv } from '@cubicle/contract/api';
import { tenantUsage, usageSpan } from '../../../../lib/api/usage';
import { requireSession } from '../../../../lib/session/current';

/** GET /usage/csv?days=N: the usage page's rows (per pool and UTC day) as a CSV download. */
export async function GET(request: Request): Promise<Response> {
  const session = await requireSession();
  if (session.role !== 'admin') return new Response('admin keys only\n', { status: 403 });
  const days = Number(new URL(request.url).searchParams.get('days'));
  const span = usageSpan([7, 30, 90].includes(days) ? days : 30);
  const usage = await tenantUsage(session, span);
  return new Response(usageToCsv(usage.rows), {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="cubicle-usage-${span.from.slice(0, 10)}.csv"`,
      'cache-control': 'no-store',
    },
  });
}
