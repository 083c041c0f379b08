// Reading a downloaded recording with Debian's FFmpeg: what the recording e2e tests compare a
// claim's video against (its length, its frames, the pixels at a step's instant).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** probe is ffprobe's view of a file: duration (s) and decoded frame count. */
export function probe(file: string): { duration: number; frames: number } {
  const out = JSON.parse(
    execFileSync(
      'ffprobe',
      [
        '-v',
        'error',
        '-count_frames',
        '-show_entries',
        'format=duration:stream=nb_read_frames',
        '-of',
        'json',
        file,
      ],
      { encoding: 'utf8' },
    ),
  ) as { format: { duration: string }; streams: { nb_read_frames: string }[] };
  return { duration: Number(out.format.duration), frames: Number(out.streams[0]!.nb_read_frames) };
}

/** decodeErrors decodes every frame and answers FFmpeg's complaints (empty when all play). */
export function decodeErrors(file: string): string {
  return execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** grayImage is an image, or a video frame at `at` seconds, scaled to width×height grey bytes. */
export function grayImage(file: string, width: number, height: number, at?: number): Buffer {
  return execFileSync('ffmpeg', [
    '-v',
    'error',
    ...(at === undefined ? [] : ['-ss', at.toFixed(3)]),
    '-i',
    file,
    '-frames:v',
    '1',
    '-vf',
    `scale=${width}:${height}`,
    '-f',
    'rawvideo',
    '-pix_fmt',
    'gray',
    '-',
  ]);
}

/**
 * frameTimes lists the presentation time (s) of every frame, in order. The recordings are H.264
 * without B-frames, so packet order is frame order and no frame needs decoding to be placed.
 */
export function frameTimes(file: string): number[] {
  return execFileSync(
    'ffprobe',
    [
      '-v',
      'error',
      '-select_streams',
      'v:0',
      '-show_entries',
      'packet=pts_time',
      '-of',
      'csv=p=0',
      file,
    ],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .map(Number);
}

/**
 * framesByIndex decodes the frames with these indices (in frameTimes' order) as width×height grey
 * bytes each, in one pass; the answer follows the indices' order.
 */
export function framesByIndex(
  file: string,
  indices: number[],
  width: number,
  height: number,
): Buffer[] {
  const wanted = [...new Set(indices)].sort((a, b) => a - b);
  // Runs of consecutive indices as between(n,a,b): FFmpeg's expression parser refuses a long
  // sum of single-frame terms (seen at ~150 terms).
  const runs: [number, number][] = [];
  for (const n of wanted) {
    const last = runs.at(-1);
    if (last && n === last[1] + 1) last[1] = n;
    else runs.push([n, n]);
  }
  const raw = execFileSync(
    'ffmpeg',
    [
      '-v',
      'error',
      '-i',
      file,
      '-vf',
      `select='${runs.map(([a, b]) => `between(n\\,${a}\\,${b})`).join('+')}',scale=${width}:${height}`,
      '-fps_mode',
      'passthrough',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'gray',
      '-',
    ],
    { maxBuffer: 1 << 30 },
  );
  const size = width * height;
  if (raw.length !== wanted.length * size)
    throw new Error(`decoded ${raw.length / size} frames of ${wanted.length} asked`);
  return indices.map((n) => {
    const at = wanted.indexOf(n) * size;
    return raw.subarray(at, at + size);
  });
}

/**
 * encoderPidOf finds the FFmpeg recording a sandbox's screen, on the host: the one in the
 * sandbox's cgroup (named after its id), or the only recording FFmpeg when cgroups are not in use.
 */
export function encoderPidOf(sandboxId: string): number {
  const encoders = readdirSync('/proc').filter((p) => {
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      return /^\d+$/.test(p) && cmd.startsWith('ffmpeg') && cmd.includes('x11grab');
    } catch {
      return false;
    }
  });
  const ours = encoders.filter((p) => {
    try {
      return readFileSync(`/proc/${p}/cgroup`, 'utf8').includes(sandboxId);
    } catch {
      return false;
    }
  });
  const pids = ours.length > 0 ? ours : encoders;
  if (pids.length !== 1) throw new Error(`${pids.length} recording encoders for ${sandboxId}`);
  return Number(pids[0]);
}

/**
 * unnamedHoles are the spans between consecutive frames (pts, s) longer than `minS` that no gap
 * of the recording names (a gap ends at the frame after the hole and starts at most a frame
 * interval after the one before it, within 50 ms): a video holding a still picture it does not
 * own up to. Empty when the recording names every hole.
 */
export function unnamedHoles(
  times: readonly number[],
  gaps: readonly { start_ms: number; end_ms: number }[],
  fps: number,
  minS = 1.2,
): [number, number][] {
  const out: [number, number][] = [];
  for (let n = 1; n < times.length; n++) {
    const [a, b] = [times[n - 1]!, times[n]!];
    if (b - a <= minS) continue;
    const named = gaps.some(
      (g) => Math.abs(g.end_ms / 1000 - b) <= 0.05 && g.start_ms / 1000 <= a + 1 / fps + 0.05,
    );
    if (!named) out.push([a, b]);
  }
  return out;
}
