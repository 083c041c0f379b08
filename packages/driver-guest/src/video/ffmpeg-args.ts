import type { VideoStartRequest } from '@cubicle/contract/guest';

/** x264 constant-quality factor per quality (lower is sharper and bigger). */
export const CRF = { low: 34, medium: 28, high: 23 } as const;

/** The files of one encoder run, inside its own directory. */
export const RUN_FILES = {
  init: 'init.mp4',
  playlist: 'index.m3u8',
  /** Every frame's time as muxed, a line each (FFmpeg's framecrc), flushed per frame. */
  frames: 'frames.txt',
  segmentPattern: 'seg_%06d.m4s',
  segment: /^seg_(\d{6})\.m4s$/,
} as const;

/**
 * ffmpegArgs is the encoder's command line: the whole X screen (x11grab's default) at `fps`,
 * H.264 (libx264 `veryfast`, `zerolatency`: no B-frames, so decode order is display order and a
 * segment's first decode time is its first frame's) in fragmented MP4 written as HLS segments
 * of `segment_seconds`, each starting on a keyframe (forced by capture time) so every segment
 * plays on its own after the init. One thread: the encoder shares the sandbox's CPU with the desktop it records.
 * `temp_file` writes each segment under a temporary name and renames it when closed, so a
 * listed segment is always whole, and a killed encoder leaves at most its open segment behind.
 */
export function ffmpegArgs(display: string, runDir: string, start: VideoStartRequest): string[] {
  const gop = start.fps * start.segment_seconds;
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'info',
    '-f',
    'x11grab',
    '-draw_mouse',
    '1',
    '-framerate',
    String(start.fps),
    '-i',
    display,
    // Every frame keeps its capture time (x11grab stamps the wall clock): with the default
    // constant-rate output, FFmpeg re-timed frames by their count, and under load (a starved
    // encoder captures late) the video drifted behind the clock the timeline uses.
    '-fps_mode',
    'passthrough',
    // After a stall x11grab grabs every frame it missed at once (measured: 20 frames within 10 ms
    // after a 4-s SIGSTOP), all of the same screen: keep one frame per half interval, which costs
    // a starved encoder nothing and keeps capture times rising at the ms.
    '-vf',
    `select=isnan(prev_selected_t)+gte(t-prev_selected_t\\,${(0.5 / start.fps).toFixed(3)})`,
    // ...to the millisecond: the encoder's time base defaulted to 1/fps, which rounded every
    // capture time onto the frame grid (up to half an interval off: 100 ms at 5 fps, 500 ms at
    // 1) and stamped frames grabbed in a burst after a stall with one instant. A frame then said
    // it was taken after a step when it was taken before it (e2e recording-apps).
    '-enc_time_base',
    '1/1000',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-tune',
    'zerolatency',
    '-crf',
    String(CRF[start.quality]),
    // A keyframe every segment_seconds of capture time (frames are not evenly spaced).
    '-force_key_frames',
    `expr:gte(t,n_forced*${start.segment_seconds})`,
    '-g',
    String(gop * 2),
    '-sc_threshold',
    '0',
    '-pix_fmt',
    'yuv420p',
    '-threads',
    '1',
    // Two outputs of the same packets: the HLS segments, and a line per frame with its time
    // (ms), which the muxer loses at segment cuts and the guest puts back (fmp4-retime.ts). A
    // file, not FFmpeg's log: a guest slow to read a pipe would block the encoder. (Tee options
    // are `:`-separated; the run's directory has no `:`, `|` or `]`.)
    '-map',
    '0:v',
    '-f',
    'tee',
    [
      `[f=hls:hls_segment_type=fmp4:hls_time=${start.segment_seconds}:hls_list_size=0`,
      `:hls_flags=independent_segments+temp_file:hls_fmp4_init_filename=${RUN_FILES.init}`,
      `:hls_segment_filename=${runDir}/${RUN_FILES.segmentPattern}]${runDir}/${RUN_FILES.playlist}`,
      `|[f=framecrc:flush_packets=1]${runDir}/${RUN_FILES.frames}`,
    ].join(''),
  ];
}

/**
 * captureStartOf finds the wall-clock time of the first captured frame in FFmpeg's log: x11grab
 * stamps frames with the wall clock, and FFmpeg prints the input's `start:` in seconds. Output
 * time 0 is that frame, so it anchors the run on the claim's clock. Null until it is printed.
 */
export function captureStartOf(log: string): number | null {
  const m = /Input #0, x11grab,[\s\S]*?start: (\d+(?:\.\d+)?)/.exec(log);
  return m ? Math.round(Number(m[1]) * 1000) : null;
}

/**
 * frameTimesOf reads the muxed frames' times (ms from the run's first frame) from complete lines
 * of the run's framecrc file (`#tb 0: 1/1000`, then `0, dts, pts, duration, size, crc...` per
 * packet), in order: one per sample of the run's segments, in the same order.
 */
export function frameTimesOf(text: string, timeBase: [number, number] = [1, 1000]): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/^0,\s*-?\d+,\s*(-?\d+),/gm))
    out.push(Math.round((Number(m[1]) * timeBase[0] * 1000) / timeBase[1]));
  return out;
}

/** frameTimeBaseOf reads the framecrc file's time base (`#tb 0: 1/1000`), or null before it. */
export function frameTimeBaseOf(text: string): [number, number] | null {
  const m = /^#tb 0: (\d+)\/(\d+)$/m.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

export interface PlaylistEntry {
  file: string;
  index: number;
  /** Offset of its first frame from the run's first frame, and its length (ms). */
  offsetMs: number;
  durationMs: number;
}

/** parsePlaylist reads the closed segments of a run's HLS playlist, in order. */
export function parsePlaylist(text: string): PlaylistEntry[] {
  const out: PlaylistEntry[] = [];
  let pending: number | null = null;
  let offset = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const inf = /^#EXTINF:([\d.]+)/.exec(line);
    if (inf) {
      pending = Number(inf[1]) * 1000;
      continue;
    }
    if (!line || line.startsWith('#') || pending === null) continue;
    const m = RUN_FILES.segment.exec(line);
    if (m) {
      out.push({
        file: line,
        index: Number(m[1]),
        offsetMs: Math.round(offset),
        durationMs: Math.round(pending),
      });
    }
    offset += pending;
    pending = null;
  }
  return out;
}
