import { describe, expect, it } from 'vitest';
import { outcomeMessage, readOutcomeMessage } from './guest-call-messages.js';
import { serverTimingOf } from './guest-call-timing.js';

describe('guest call timing', () => {
  const worker = { queued: 1.234, target: 0.8, guest: 30.456, check: 0.5, store: 2, worker: 34 };

  it('is carried in the outcome head and read back beside the body text', () => {
    const message = outcomeMessage({
      job_id: 'api01.3',
      status: 200,
      body: { a: 1 },
      timing: worker,
    });
    expect(readOutcomeMessage(message)).toEqual({
      job_id: 'api01.3',
      status: 200,
      timing: worker,
      bodyText: '{"a":1}',
    });
  });

  it('writes the API parts, the lane (the wait the worker did not account for), then the worker parts', () => {
    expect(serverTimingOf({ enqueue: 0.412, wait: 40 }, worker)).toBe(
      'enqueue;dur=0.41, wait;dur=40, lane;dur=6, queued;dur=1.23, target;dur=0.8, guest;dur=30.46, check;dur=0.5, store;dur=2, worker;dur=34',
    );
    // A worker of the version before (no timing): the API's own parts only.
    expect(serverTimingOf({ enqueue: 1, wait: 2 }, undefined)).toBe('enqueue;dur=1, wait;dur=2');
  });
});
