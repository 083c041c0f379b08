#!/usr/bin/env node
// node scripts/bench/recording-clock.mjs [--seconds N] [--busy N] [--stop-at S --stop-for S] [--fps N] [--raw]
// How honest the recording's frame times are, on a private Xvfb: a painter sets the root window
// to a new colour every 0.4 s and logs when (before and after the X server took it); the guest's
// encoder (packages/driver-guest/dist's VideoEncoder, built) records the screen; each stored frame's time
// (run start + its pts) is compared with when the colour it shows was on screen. `--busy N`
// starts N busy loops beside it (stopped by PID), `--stop-at/--stop-for` SIGSTOPs the encoder.
// Prints JSON: frames, holes (gaps > 3 frame intervals), and per-frame error: how far the
// stamp lies outside the span its content was on screen (negative: stamped before it was drawn).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1] ?? fallback) : fallback;
};
const seconds = option('--seconds', 20);
const busy = option('--busy', 0);
const stopAt = option('--stop-at', 0);
const stopFor = option('--stop-for', 0);
const fps = option('--fps', 5);
const root = fileURLToPath(new URL('../../', import.meta.url));
const { VideoEncoder } = await import(
  join(root, 'packages/driver-guest/dist/video/video-encoder.js')
);
const raw = args.includes('--raw'); // FFmpeg's own segments, not the guest's retimed ones

const PERIOD_MS = 400;
const LEVELS = [0, 60, 120, 180, 240];
/** colour i: a digit per channel, 125 distinct colours (a 50 s cycle). */
const colourOf = (i) => {
  const k = i % 125;
  return [LEVELS[k % 5], LEVELS[Math.floor(k / 5) % 5], LEVELS[Math.floor(k / 25)]];
};

const display = `:${90 + Math.floor(Math.random() * 9)}`;
const dir = mkdtempSync(join(tmpdir(), 'rec-clock-'));
const kids = [];
const xvfb = spawn('Xvfb', [display, '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], {
  stdio: 'ignore',
});
kids.push(xvfb);
const sock = `/tmp/.X11-unix/X${display.slice(1)}`;
for (let i = 0; i < 100 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
const env = { ...process.env, DISPLAY: display };
for (let i = 0; i < busy; i++)
  kids.push(spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));

const encoder = new VideoEncoder(display, join(dir, 'video'), env);
const started = await encoder.start({ fps, quality: 'medium', segment_seconds: 2 });
const encPid = started.encoder_pid;

// The painter: libX11 through ctypes (no X tools needed), one line per request, answered after
// XSync (the X server has drawn it).
const painter = spawn(
  '/usr/bin/python3',
  [
    '-c',
    [
      'import ctypes,sys,time',
      'x=ctypes.CDLL("libX11.so.6")',
      'x.XOpenDisplay.restype=ctypes.c_void_p',
      'x.XDefaultRootWindow.argtypes=[ctypes.c_void_p]',
      'x.XDefaultRootWindow.restype=ctypes.c_ulong',
      'x.XSetWindowBackground.argtypes=[ctypes.c_void_p,ctypes.c_ulong,ctypes.c_ulong]',
      'x.XClearWindow.argtypes=[ctypes.c_void_p,ctypes.c_ulong]',
      'x.XSync.argtypes=[ctypes.c_void_p,ctypes.c_int]',
      'd=x.XOpenDisplay(None); r=x.XDefaultRootWindow(d)',
      'for line in sys.stdin:',
      ' x.XSetWindowBackground(d,r,int(line)); x.XClearWindow(d,r); x.XSync(d,0)',
      ' sys.stdout.write("ok\\n"); sys.stdout.flush()',
    ].join('\n'),
  ],
  { env, stdio: ['pipe', 'pipe', 'inherit'] },
);
kids.push(painter);
painter.stdout.setEncoding('utf8');
let acks = 0;
let waiting = null;
painter.stdout.on('data', (d) => {
  acks += d.split('\n').filter(Boolean).length;
  waiting?.();
});
const paint = (c, i) =>
  new Promise((resolve) => {
    waiting = () => acks > i && resolve();
    painter.stdin.write(`${(c[0] << 16) | (c[1] << 8) | c[2]}\n`);
  });
const changes = [];
const t0 = Date.now();
let i = 0;
let stopped = false;
while (Date.now() - t0 < seconds * 1000) {
  const before = Date.now();
  await paint(colourOf(i), i);
  changes.push({ i, before, after: Date.now() });
  i++;
  const el = (Date.now() - t0) / 1000;
  if (stopFor && !stopped && el >= stopAt) {
    stopped = true;
    process.kill(encPid, 'SIGSTOP');
    setTimeout(() => process.kill(encPid, 'SIGCONT'), stopFor * 1000);
  }
  const wait = before + PERIOD_MS - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
const load = loadavg()[0];
const status = await encoder.stop();
for (const k of kids) k.kill('SIGKILL');

const startMs = status.segments[0].run_started_at_ms;
const all = join(dir, 'all.mp4');
const parts = [Buffer.from((await encoder.segment('r0-init')).data_base64, 'base64')];
for (const seg of status.segments.filter((x) => x.run === 0)) {
  parts.push(
    raw
      ? readFileSync(join(dir, 'video', 'run-0', `seg_${String(seg.index).padStart(6, '0')}.m4s`))
      : Buffer.from((await encoder.segment(seg.id)).data_base64, 'base64'),
  );
}
writeFileSync(all, Buffer.concat(parts));
const pts = execFileSync(
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
    all,
  ],
  { encoding: 'utf8' },
)
  .trim()
  .split('\n')
  .map(Number);
const pixels = execFileSync(
  'ffmpeg',
  [
    '-v',
    'error',
    '-i',
    all,
    '-vf',
    'scale=8:5',
    '-fps_mode',
    'passthrough',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgb24',
    '-',
  ],
  { maxBuffer: 1 << 28 },
);
const px = 8 * 5 * 3;
const errors = [];
for (let n = 0; n < pts.length; n++) {
  const f = pixels.subarray(n * px, (n + 1) * px);
  const c = [0, 1, 2].map((ch) => f[(2 * 8 + 4) * 3 + ch]);
  const k = Math.round(c[0] / 60) + 5 * Math.round(c[1] / 60) + 25 * Math.round(c[2] / 60);
  const stamp = startMs + pts[n] * 1000;
  // The change nearest in time with this colour.
  let best = null;
  for (const ch of changes)
    if (ch.i % 125 === k && (!best || Math.abs(ch.before - stamp) < Math.abs(best.before - stamp)))
      best = ch;
  if (!best) {
    errors.push({ n, stamp: stamp - t0, err: null });
    continue;
  }
  const next = changes.find((x) => x.i === best.i + 1);
  const from = best.before;
  const to = next ? next.after : Infinity;
  const err = stamp < from ? stamp - from : stamp > to ? stamp - to : 0;
  errors.push({ n, t: Math.round(stamp - t0), err: Math.round(err) });
}
const gaps = [];
for (let n = 1; n < pts.length; n++)
  if (pts[n] - pts[n - 1] > 3 / fps)
    gaps.push([Math.round(pts[n - 1] * 1000), Math.round(pts[n] * 1000)]);
const errs = errors.filter((e) => e.err !== null).map((e) => e.err);
console.log(
  JSON.stringify({
    seconds,
    busy,
    stop: stopFor ? [stopAt, stopFor] : null,
    load: Math.round(load * 10) / 10,
    frames: pts.length,
    expected: seconds * fps,
    holes: gaps,
    err_min_ms: Math.min(...errs),
    err_max_ms: Math.max(...errs),
    bad: errors.filter((e) => e.err === null || Math.abs(e.err) > 250).slice(0, 30),
    raw,
  }),
);
if (process.env.KEEP) console.log(dir);
else rmSync(dir, { recursive: true, force: true });
