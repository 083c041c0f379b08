import { describe, expect, it } from 'vitest';
import { claimOfToken } from '../app/replay/[token]/claim-of-token';
import {
  clock,
  currentIndex,
  gapAt,
  gapText,
  videoSecondsOf,
} from '../app/components/replay/step-text';

describe('replay steps on the video clock', () => {
  it('says when the video is inside a span without frames, and why', () => {
    const gaps = [{ start_ms: 5_200, end_ms: 9_400, reason: 'no_frames' as const }];
    expect(gapAt(gaps, 5.1)).toBeNull();
    expect(gapAt(gaps, 5.2)).toBe(gaps[0]);
    expect(gapAt(gaps, 9.4)).toBeNull();
    expect(gapText(gaps[0]!)).toBe('0:05.2–0:09.4, the encoder captured nothing');
  });

  it('places an entry at its wall-clock time minus the recording start, never before 0', () => {
    const startedAt = '2026-12-10T10:00:00.000Z';
    expect(videoSecondsOf({ at: '2026-12-10T10:00:02.500Z' }, startedAt)).toBe(2.5);
    expect(videoSecondsOf({ at: '2026-12-10T09:59:59.000Z' }, startedAt)).toBe(0);
  });

  it('highlights the last step at or before the video time', () => {
    const seconds = [0, 1.5, 1.5, 4, 9];
    expect(currentIndex(seconds, -1)).toBe(-1);
    expect(currentIndex(seconds, 1.5)).toBe(2);
    expect(currentIndex(seconds, 3.9)).toBe(2);
    // A seek lands on a frame just before the step (50 ms slack): that is the step.
    expect(currentIndex(seconds, 3.97)).toBe(3);
    expect(currentIndex(seconds, 4)).toBe(3);
    expect(currentIndex(seconds, 100)).toBe(4);
    expect(currentIndex([], 3)).toBe(-1);
  });

  it('prints media times as m:ss.t', () => {
    expect(clock(0)).toBe('0:00.0');
    expect(clock(75.26)).toBe('1:15.3');
  });
});

describe('claimOfToken', () => {
  const token = (payload: unknown) =>
    `e30.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.sig`;

  it('reads the claim a token names (the API verifies it), and nothing from what is not one', () => {
    expect(claimOfToken(token({ clm: 'clm_01jzzzzzzzzzzzzzzzzzzzzzzz' }))).toBe(
      'clm_01jzzzzzzzzzzzzzzzzzzzzzzz',
    );
    expect(claimOfToken(token({ clm: '../../v1/tenant' }))).toBeNull();
    expect(claimOfToken('garbage')).toBeNull();
    expect(claimOfToken('a.!!!.c')).toBeNull();
  });
});
