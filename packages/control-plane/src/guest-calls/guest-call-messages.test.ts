import { describe, expect, it } from 'vitest';
import {
  outcomeMessage,
  readOutcomeMessage,
  type GuestCallOutcome,
} from './guest-call-messages.js';

describe('guest call outcome messages', () => {
  const body = {
    elements: [{ name: 'say ,"body": here', role: 'link', text: 'a "quoted" \\ back\\"slash' }],
    duration_ms: 12,
  };

  it('carries the body last, as the JSON text the worker wrote, and is plain JSON', () => {
    const outcome: GuestCallOutcome = {
      job_id: 'api0a1b.7',
      status: 200,
      body,
      first_confirmed_action_ms: 85.5,
    };
    const message = outcomeMessage(outcome);
    const read = readOutcomeMessage(message);
    expect(read).toEqual({
      job_id: 'api0a1b.7',
      status: 200,
      first_confirmed_action_ms: 85.5,
      bodyText: JSON.stringify(body),
    });
    // A reader that parses the message whole (the API of the version before) gets the outcome.
    expect(JSON.parse(message)).toEqual({ v: 2, ...outcome });
  });

  it('reads the whole-JSON messages of the version before, and an outcome without a body', () => {
    const old = { job_id: 'api0a1b.8', status: 409, body: { error: { code: 'x' } } };
    expect(readOutcomeMessage(JSON.stringify(old))).toEqual(old);
    expect(
      readOutcomeMessage(outcomeMessage({ job_id: 'api0a1b.9', status: 200, body: undefined })),
    ).toEqual({
      job_id: 'api0a1b.9',
      status: 200,
    });
    expect(readOutcomeMessage('{"v":2,"status":"no"}')).toBeUndefined();
    expect(readOutcomeMessage('not json')).toBeUndefined();
  });
});
