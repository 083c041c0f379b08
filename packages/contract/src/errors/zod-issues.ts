import type { ZodError } from 'zod';

/** One failing field of a request, as `details.issues` of a `validation_failed` error lists it. */
export interface ValidationIssue {
  /** Which part of the request: `body`, `query`, `params`. */
  location: string;
  /** The field's path, dot-joined (`steps.0.text`); empty for the whole part. */
  path: string;
  code: string;
  message: string;
}

/**
 * zodIssues turns a ZodError into the `details.issues` list: which field, what was wrong. The
 * API, the guest driver and the worker (which checks a guest call's body before delivering it)
 * all describe a refused body this way.
 */
export function zodIssues(err: ZodError, where: string): ValidationIssue[] {
  return err.issues.map((i) => ({
    location: where,
    path: i.path.map(String).join('.'),
    code: i.code,
    message: i.message,
  }));
}
