import { describe, expect, it } from 'vitest';
import { captureStartOf, ffmpegArgs, parsePlaylist } from './ffmpeg-args.js';

describe('the encoder command line and its outputs', () => {
  it('keyframes start every segment, frames keep ms capture times and one thread encodes', () => {
    const args = ffmpegArgs(':3', '/tmp/v/run-0', { fps: 5, quality: 'low', segment_seconds: 2 });
    const after = (flag: string) => args[args.indexOf(flag) + 1];
    expect(after('-force_key_frames')).toBe('expr:gte(t,n_forced*2)');
    expect(after('-fps_mode')).toBe('passthrough');
    // Capture times kept to the ms, not rounded onto the 1/fps grid.
    expect(after('-enc_time_base')).toBe('1/1000');
    expect(after('-crf')).toBe('34');
    expect(after('-threads')).toBe('1');
    expect(after('-i')).toBe(':3');
    expect(args.at(-1)).toBe('/tmp/v/run-0/index.m3u8');
  });

  it("reads the first frame's wall-clock time from x11grab's input line", () => {
    const log =
      "Input #0, x11grab, from ':3':\n  Duration: N/A, start: 1796601095.977231, bitrate: N/A";
    expect(captureStartOf(log)).toBe(1796601095977);
    expect(captureStartOf('ffmpeg version 5.1')).toBeNull();
  });

  it('lists closed segments with their offsets from the run start', () => {
    const text = [
      '#EXTM3U',
      '#EXT-X-MAP:URI="init.mp4"',
      '#EXTINF:2.000000,',
      'seg_000000.m4s',
      '#EXTINF:2.000000,',
      'seg_000001.m4s',
      '#EXTINF:1.400000,',
      'seg_000002.m4s',
      '#EXT-X-ENDLIST',
    ].join('\n');
    expect(parsePlaylist(text)).toEqual([
      { file: 'seg_000000.m4s', index: 0, offsetMs: 0, durationMs: 2000 },
      { file: 'seg_000001.m4s', index: 1, offsetMs: 2000, durationMs: 2000 },
      { file: 'seg_000002.m4s', index: 2, offsetMs: 4000, durationMs: 1400 },
    ]);
  });
});
