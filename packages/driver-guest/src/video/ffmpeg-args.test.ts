import { describe, expect, it } from 'vitest';
import {
  captureStartOf,
  ffmpegArgs,
  frameTimeBaseOf,
  frameTimesOf,
  parsePlaylist,
} from './ffmpeg-args.js';

describe('the encoder command line and its outputs', () => {
  it('keyframes start every segment, frames keep ms capture times and one thread encodes', () => {
    const args = ffmpegArgs(':3', '/tmp/v/run-0', { fps: 5, quality: 'low', segment_seconds: 2 });
    const after = (flag: string, nth = 0) =>
      args[
        args.findIndex(
          (a, i) => a === flag && args.slice(0, i).filter((b) => b === flag).length === nth,
        ) + 1
      ];
    expect(after('-force_key_frames')).toBe('expr:gte(t,n_forced*2)');
    expect(after('-fps_mode')).toBe('passthrough');
    // Capture times kept to the ms, not rounded onto the 1/fps grid.
    expect(after('-enc_time_base')).toBe('1/1000');
    expect(after('-crf')).toBe('34');
    expect(after('-threads')).toBe('1');
    expect(after('-i')).toBe(':3');
    // Frames grabbed in a burst after a stall: one per half interval (100 ms at 5 fps) is kept.
    expect(after('-vf')).toBe('select=isnan(prev_selected_t)+gte(t-prev_selected_t\\,0.100)');
    // The segments, and beside them every frame's time in a file.
    expect(after('-f', 1)).toBe('tee');
    expect(args.at(-1)).toBe(
      '[f=hls:hls_segment_type=fmp4:hls_time=2:hls_list_size=0:hls_flags=independent_segments+temp_file:hls_fmp4_init_filename=init.mp4:hls_segment_filename=/tmp/v/run-0/seg_%06d.m4s]/tmp/v/run-0/index.m3u8|[f=framecrc:flush_packets=1]/tmp/v/run-0/frames.txt',
    );
  });

  it("reads the first frame's wall-clock time from x11grab's input line", () => {
    const log =
      "Input #0, x11grab, from ':3':\n  Duration: N/A, start: 1796601095.977231, bitrate: N/A";
    expect(captureStartOf(log)).toBe(1796601095977);
    expect(captureStartOf('ffmpeg version 5.1')).toBeNull();
  });

  it("reads each frame's time (ms) from the framecrc file, whole lines only", () => {
    const text = [
      '#software: Lavf59.27.100',
      '#tb 0: 1/1000',
      '#media_type 0: video',
      '0,          0,          0,      200,     1088, 0xf75f5ee0, S=1,        8',
      '0,        188,        188,      200,      113, 0x76dd2bd2, F=0x0, S=1,        8',
      '0,       6736,       6736,      200,       43, 0xd1280707, F=0x0, S=1,        8',
      '',
    ].join('\n');
    expect(frameTimeBaseOf(text)).toEqual([1, 1000]);
    expect(frameTimesOf(text)).toEqual([0, 188, 6736]);
    expect(frameTimesOf('0,   337,   337,   1,   43, 0x0\n', [1, 50])).toEqual([6740]);
    expect(frameTimeBaseOf('#software: Lavf59.27.100\n')).toBeNull();
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
