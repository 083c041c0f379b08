import { describe, expect, it } from 'vitest';
import { captureStartOf, encodedTimesOf, ffmpegArgs, parsePlaylist } from './ffmpeg-args.js';

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
    // Frames grabbed in a burst after a stall: one per half interval (100 ms at 5 fps) is kept.
    expect(after('-vf')).toBe('select=isnan(prev_selected_t)+gte(t-prev_selected_t\\,0.100)');
    expect(args).toContain('-debug_ts');
    expect(args.at(-1)).toBe('/tmp/v/run-0/index.m3u8');
  });

  it("reads the first frame's wall-clock time from x11grab's input line", () => {
    const log =
      "Input #0, x11grab, from ':3':\n  Duration: N/A, start: 1796601095.977231, bitrate: N/A";
    expect(captureStartOf(log)).toBe(1796601095977);
    expect(captureStartOf('ffmpeg version 5.1')).toBeNull();
  });

  it("reads each frame's time (ms) as the encoder was handed it, from -debug_ts lines", () => {
    const log = [
      'filter -> pts:2600 pts_time:2.6 exact:2600.01 time_base:1/1000',
      'encoder <- type:video frame_pts:2600 frame_pts_time:2.6 time_base:1/1000',
      'encoder -> type:video pkt_pts:2600 pkt_pts_time:2.6 pkt_dts:2600 pkt_dts_time:2.6 duration:0 duration_time:0',
      'encoder -> type:video pkt_pts:41600 pkt_pts_time:41.6 pkt_dts:41600 pkt_dts_time:41.6 duration:0 duration_time:0',
      'muxer <- type:video pkt_pts:41600 pkt_pts_time:2.6 pkt_dts:41600 pkt_dts_time:2.6 duration:0 duration_time:0 size:113',
      'encoder <- type:video frame_pts:6736 frame_pts_time:6.736 time_base:1/1000',
      'encoder <- type:video frame_pts:337 frame_pts_time:6.74 time_base:1/50',
      '',
    ].join('\n');
    expect(encodedTimesOf(log)).toEqual([2600, 6736, 6740]);
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
