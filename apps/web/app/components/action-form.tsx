'use client';

import { useActionState, type ReactNode } from 'react';
import type { ActionState } from '../../lib/api/client';

interface Props {
  action: (prev: ActionState, form: FormData) => Promise<ActionState>;
  children: ReactNode;
  submit: string;
  pending?: string;
  className?: string;
  buttonClass?: string;
  confirm?: string;
}

/** ActionForm runs a server action and shows its pending state and its error or success message. */
export function ActionForm({
  action,
  children,
  submit,
  pending,
  className,
  buttonClass,
  confirm,
}: Props) {
  const [state, run, isPending] = useActionState(action, null);
  return (
    <form
      action={run}
      className={className ?? 'inline'}
      onSubmit={(event) => {
        if (confirm && !window.confirm(confirm)) event.preventDefault();
      }}
    >
      {children}
      <button type="submit" className={buttonClass} disabled={isPending}>
        {isPending ? (pending ?? '…') : submit}
      </button>
      {state && !state.ok ? (
        <span role="alert" className="error">
          {state.error}
        </span>
      ) : null}
      {state?.ok && state.message ? <span className="ok">{state.message}</span> : null}
    </form>
  );
}
