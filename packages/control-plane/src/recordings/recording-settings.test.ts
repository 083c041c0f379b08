import { describe, expect, it } from 'vitest';
import type { AppError } from '@cubicle/contract/errors';
import { effectiveRecording, poolRecordingView } from './recording-settings.js';

const pool = { video: true, fps: 5, quality: 'medium' as const };

describe('effectiveRecording', () => {
  it("records with the pool's settings unless the claim says otherwise", () => {
    expect(effectiveRecording(pool, undefined)).toEqual({ fps: 5, quality: 'medium' });
    expect(effectiveRecording(pool, { video: true, fps: 2 })).toEqual({
      fps: 2,
      quality: 'medium',
    });
    expect(effectiveRecording(pool, { video: false })).toBeNull();
  });

  it('records only claims that ask when the pool offers without recording by default', () => {
    const offered = { ...pool, video: false };
    expect(effectiveRecording(offered, undefined)).toBeNull();
    expect(effectiveRecording(offered, { video: true, quality: 'low' })).toEqual({
      fps: 5,
      quality: 'low',
    });
  });

  it('refuses a claim that asks from a pool offering none, and records nothing otherwise', () => {
    expect(effectiveRecording(null, undefined)).toBeNull();
    expect(effectiveRecording(null, { video: false })).toBeNull();
    try {
      effectiveRecording(null, { video: true });
      expect.unreachable();
    } catch (err) {
      expect((err as AppError).code).toBe('recording_not_allowed');
    }
  });

  it("shows the pool's estimate scaled by frame rate", () => {
    const five = poolRecordingView({ video: true, fps: 5, quality: 'medium' })!;
    const ten = poolRecordingView({ video: true, fps: 10, quality: 'medium' })!;
    expect(ten.estimate.mb_per_min).toBeCloseTo(five.estimate.mb_per_min * 2, 0);
    expect(poolRecordingView(null)).toBeNull();
  });
});
