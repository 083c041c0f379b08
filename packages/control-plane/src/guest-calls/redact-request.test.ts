import { describe, expect, it } from 'vitest';
import { REDACTED, redactRequest } from './redact-request.js';

describe('redactRequest', () => {
  it('replaces typed text and set values at any depth and keeps the rest', () => {
    const request = { window_id: 5, element_token: 's1:4', action: 'type_text', text: 'hunter2' };
    expect(redactRequest(request)).toEqual({
      window_id: 5,
      element_token: 's1:4',
      action: 'type_text',
      text: REDACTED,
    });
    expect(redactRequest({ action: 'set_value', value: '' })).toEqual({
      action: 'set_value',
      value: REDACTED,
    });
    expect(redactRequest({ steps: [{ text: 'a' }, { x: 1 }] })).toEqual({
      steps: [{ text: REDACTED }, { x: 1 }],
    });
  });

  it('does not change its input', () => {
    const request = { text: 'secret' };
    redactRequest(request);
    expect(request.text).toBe('secret');
  });
});
