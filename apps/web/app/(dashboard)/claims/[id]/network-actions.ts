'use server';

import { revalidatePath } from 'next/cache';
import { api, failure, type ActionState } from '../../../../lib/api/client';
import { specOf } from '../../../../lib/api/pool-spec';
import { requireSession } from '../../../../lib/session/current';
import { allowRuleFor } from './allow-rule';

/**
 * allowForPool is the Network tab's one step: it adds an allow rule for a denied destination to
 * the claim's pool through the normal API (GET the pool, PUT it back with the rule added), so the
 * change is validated, audited (`pool.apply`) and reaches the running sandbox like any pool edit.
 * A pool at `none` becomes an `allowlist` of that one rule; `open` needs no allow rule.
 */
export async function allowForPool(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  const poolName = String(form.get('pool'));
  const rule = allowRuleFor({
    name: stringOrNull(form.get('name')),
    ip: stringOrNull(form.get('ip')),
    port: form.get('port') ? Number(form.get('port')) : null,
  });
  if (!rule) return { ok: false, error: 'This destination cannot be named by an allow rule.' };
  try {
    const pool = await api(session, (c) => c.pools.get(poolName));
    const egress = pool.egress ?? { mode: 'none', allow: [], deny: [] };
    if (egress.mode === 'open') return { ok: true, message: 'The pool is open already' };
    if (egress.allow.includes(rule)) return { ok: true, message: `${rule} is allowed already` };
    await api(session, (c) =>
      c.pools.apply(poolName, {
        ...specOf(pool),
        egress: { mode: 'allowlist', allow: [...egress.allow, rule], deny: egress.deny },
      }),
    );
  } catch (error) {
    return failure(error);
  }
  revalidatePath('/claims', 'layout');
  return { ok: true, message: `Allowed ${rule} for pool ${poolName}` };
}

function stringOrNull(value: FormDataEntryValue | null): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
