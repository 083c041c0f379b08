'use server';

import type { Claim } from '@cubicle/sdk';
import { revalidatePath } from 'next/cache';
import { redirect } from 'next/navigation';
import { ApiError, api, failure, type ActionState } from '../../../lib/api/client';
import { specOf } from '../../../lib/api/pool-spec';
import { fieldErrorsOf, type FieldErrors } from '../../../lib/forms/field-errors';
import { requireSession } from '../../../lib/session/current';

/** The autoscaling form's fields, as the pool spec names them under `autoscaling`. */
const AUTOSCALING_FIELDS = ['min', 'initial', 'max'] as const;
type AutoscalingField = (typeof AUTOSCALING_FIELDS)[number];

/**
 * AutoscalingState is the form's answer: on a refusal, the API's message, each field's own
 * error, and the values as typed, so the form shows the errors beside the fields it keeps.
 */
export type AutoscalingState =
  | { ok: true; message: string; values: Record<AutoscalingField, string> }
  | {
      ok: false;
      error: string;
      fields: FieldErrors;
      values: Record<AutoscalingField, string>;
    }
  | null;

/**
 * updateAutoscaling changes a pool's min/initial/max. PUT takes the whole spec, so the rest is
 * sent back as the API described it (an unchanged template does not roll warm sandboxes).
 */
export async function updateAutoscaling(
  _prev: AutoscalingState,
  form: FormData,
): Promise<AutoscalingState> {
  const session = await requireSession();
  const name = String(form.get('pool'));
  const values = Object.fromEntries(
    AUTOSCALING_FIELDS.map((field) => [field, String(form.get(field) ?? '')]),
  ) as Record<AutoscalingField, string>;
  try {
    const pool = await api(session, (c) => c.pools.get(name));
    await api(session, (c) =>
      c.pools.apply(name, {
        ...specOf(pool),
        autoscaling: {
          min: Number(values.min),
          initial: Number(values.initial),
          max: Number(values.max),
        },
      }),
    );
  } catch (error) {
    const fields =
      error instanceof ApiError && error.code === 'validation_failed'
        ? fieldErrorsOf(error.details, AUTOSCALING_FIELDS, 'autoscaling.')
        : {};
    return { ...failure(error), fields, values };
  }
  revalidatePath('/pools');
  return { ok: true, message: 'Saved', values };
}

/** PrimeState is the prime form's answer: the text as typed is kept, so a refusal can be fixed. */
export type PrimeState =
  { ok: true; message: string; value: string } | { ok: false; error: string; value: string } | null;

/**
 * updatePrime sets a pool's `prime` from the form's JSON (empty: none). PUT takes the whole spec,
 * so the rest is sent back as the API described it; a changed prime rolls the warm desktops.
 * A refusal says which part of the prime the API refused (`prime.apps.0.url: …`).
 */
export async function updatePrime(_prev: PrimeState, form: FormData): Promise<PrimeState> {
  const session = await requireSession();
  const name = String(form.get('pool'));
  const value = String(form.get('prime') ?? '').trim();
  let prime: unknown = null;
  if (value !== '') {
    try {
      prime = JSON.parse(value);
    } catch {
      return { ok: false, error: 'The prime is not JSON: {"apps": [{"app": "browser"}]}', value };
    }
  }
  try {
    const pool = await api(session, (c) => c.pools.get(name));
    await api(session, (c) =>
      c.pools.apply(name, {
        ...specOf(pool),
        // Checked by the API (the contract's PoolPrime); its refusal names the field.
        prime: prime as typeof pool.prime,
      }),
    );
  } catch (error) {
    const issues =
      error instanceof ApiError && error.code === 'validation_failed'
        ? issuesUnder(error.details, 'prime')
        : [];
    return { ...failure(error), ...(issues.length ? { error: issues.join('; ') } : {}), value };
  }
  revalidatePath('/pools');
  return { ok: true, message: 'Saved: warm desktops roll to the new prime', value };
}

/** issuesUnder lists a validation_failed envelope's body issues under `prefix`, path first. */
function issuesUnder(details: unknown, prefix: string): string[] {
  const issues = (details as { issues?: { location: string; path: string; message: string }[] })
    ?.issues;
  return (issues ?? [])
    .filter((i) => i.location === 'body' && i.path.startsWith(prefix))
    .map((i) => `${i.path}: ${i.message}`);
}

/** claimFromPool claims a desktop (waiting up to 30 s for one) and opens it. */
export async function claimFromPool(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  const name = String(form.get('pool'));
  let claim: Claim;
  try {
    claim = (
      await api(session, (c) =>
        c.claims.create(name, { wait_seconds: 30, metadata: { source: 'dashboard' } }),
      )
    ).data;
  } catch (error) {
    return failure(error);
  }
  redirect(`/claims/${claim.id}`);
}
