import { z } from 'zod';

/** The part of a `validation_failed` envelope's details a form needs: which field, what was wrong. */
const Issues = z.object({
  issues: z.array(z.object({ location: z.string(), path: z.string(), message: z.string() })),
});

/** FieldErrors maps a form field's name to the API's message about it. */
export type FieldErrors = Record<string, string>;

/**
 * fieldErrorsOf maps the issues of a refused request body onto the form's fields: the issue at
 * body path `prefix + name` (e.g. `autoscaling.initial` with prefix `autoscaling.`) belongs to
 * field `name`. Issues about other parts, or details of another shape, map to nothing: the
 * form still shows the envelope's message, so no refusal goes unexplained.
 */
export function fieldErrorsOf(
  details: unknown,
  fields: readonly string[],
  prefix = '',
): FieldErrors {
  const parsed = Issues.safeParse(details);
  if (!parsed.success) return {};
  const errors: FieldErrors = {};
  for (const issue of parsed.data.issues) {
    if (issue.location !== 'body' || !issue.path.startsWith(prefix)) continue;
    const field = issue.path.slice(prefix.length).split('.')[0]!;
    if (fields.includes(field)) errors[field] = errors[field] ?? issue.message;
  }
  return errors;
}
