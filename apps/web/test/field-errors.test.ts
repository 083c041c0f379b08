import { describe, expect, it } from 'vitest';
import { fieldErrorsOf } from '../lib/forms/field-errors';

describe('fieldErrorsOf', () => {
  const fields = ['min', 'initial', 'max'] as const;
  it('puts each body issue beside the field its path names, the first message per field', () => {
    const details = {
      issues: [
        {
          location: 'body',
          path: 'autoscaling.initial',
          code: 'custom',
          message: 'must satisfy min ≤ initial ≤ max',
        },
        { location: 'body', path: 'autoscaling.max', code: 'too_small', message: 'too small' },
        { location: 'body', path: 'autoscaling.max', code: 'x', message: 'second' },
        { location: 'body', path: 'image', code: 'x', message: 'not this form' },
        { location: 'query', path: 'autoscaling.min', code: 'x', message: 'not the body' },
      ],
    };
    expect(fieldErrorsOf(details, fields, 'autoscaling.')).toEqual({
      initial: 'must satisfy min ≤ initial ≤ max',
      max: 'too small',
    });
  });

  it('maps details of another shape to nothing', () => {
    expect(fieldErrorsOf(undefined, fields)).toEqual({});
    expect(fieldErrorsOf({ issues: 'no' }, fields)).toEqual({});
  });
});
