import { describe, expect, it } from 'vitest';
import { resumePoint } from './resume-point.js';

describe('resumePoint', () => {
  it('follows a live run from the reader’s seq', () => {
    expect(resumePoint({ status: 'running', last_seq: 7 }, 3)).toEqual({
      afterSeq: 3,
      hasEnded: false,
    });
  });

  it('reads a cursor past the last seq as the last seq, so a live run’s end still arrives', () => {
    expect(resumePoint({ status: 'running', last_seq: 7 }, 2 ** 31)).toEqual({
      afterSeq: 7,
      hasEnded: false,
    });
    expect(resumePoint({ status: 'queued', last_seq: 0 }, Number.MAX_SAFE_INTEGER)).toEqual({
      afterSeq: 0,
      hasEnded: false,
    });
  });

  it('ends at once for a reader who has an ended run’s final status, or a cursor past it', () => {
    for (const afterSeq of [9, 10, 2 ** 31, Number.MAX_SAFE_INTEGER])
      expect(resumePoint({ status: 'succeeded', last_seq: 9 }, afterSeq)).toEqual({
        afterSeq: 9,
        hasEnded: true,
      });
  });

  it('replays an ended run to a reader who is behind', () => {
    expect(resumePoint({ status: 'failed', last_seq: 9 }, 4)).toEqual({
      afterSeq: 4,
      hasEnded: false,
    });
  });
});
