'use server';

import { SecretName, StoredSecretUsableBy } from '@cubicle/contract/api';
import { revalidatePath } from 'next/cache';
import { ApiError, api, failure, type ActionState } from '../../../lib/api/client';
import { fieldErrorsOf, type FieldErrors } from '../../../lib/forms/field-errors';
import { requireSession } from '../../../lib/session/current';

const SECRET_FIELDS = ['name', 'value', 'usable_by'] as const;

/**
 * StoreSecretState: on a refusal, each field's error and the name as typed (never the value: it
 * goes back to the browser only in the field the person typed it into, and React clears that).
 */
export type StoreSecretState =
  | { ok: true; message: string }
  | { ok: false; error: string; fields: FieldErrors; name: string }
  | null;

/** storeSecret writes a new version of a stored secret (write-only: nothing reads it back). */
export async function storeSecret(
  _prev: StoreSecretState,
  form: FormData,
): Promise<StoreSecretState> {
  const session = await requireSession();
  const name = String(form.get('name') ?? '').trim();
  const usableBy = StoredSecretUsableBy.safeParse(form.get('usable_by'));
  try {
    const stored = await api(session, (c) =>
      c.secrets.stored.create({
        name,
        value: String(form.get('value') ?? ''),
        ...(usableBy.success ? { usable_by: usableBy.data } : {}),
      }),
    );
    revalidatePath('/secrets');
    return { ok: true, message: `Stored ${stored.name} (version ${stored.version})` };
  } catch (error) {
    const fields =
      error instanceof ApiError && error.code === 'validation_failed'
        ? fieldErrorsOf(error.details, SECRET_FIELDS)
        : {};
    return { ...failure(error), fields, name };
  }
}

/** deleteSecret deletes every version of a stored secret (claims that hold a copy keep it). */
export async function deleteSecret(_prev: ActionState, form: FormData): Promise<ActionState> {
  const session = await requireSession();
  const name = SecretName.safeParse(form.get('name'));
  if (!name.success) return { ok: false, error: 'bad request' };
  try {
    await api(session, (c) => c.secrets.stored.delete(name.data));
  } catch (error) {
    return failure(error);
  }
  revalidatePath('/secrets');
  return { ok: true, message: 'Deleted' };
}
