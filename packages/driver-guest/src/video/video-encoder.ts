import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '@cubicle/contract/errors';
import { timescaleOf } from '@cubicle/contract/media';
import type {
  VideoSegment,
  VideoSegmentData,
  VideoStartRequest,
  VideoStatus,
} from '@cubicle/contract/guest';
import {
  captureStartOf,
  frameTimeBaseOf,
  frameTimesOf,
  ffmpegArgs,
  parsePlaylist,
  RUN_FILES,
  type PlaylistEntry,
} from './ffmpeg-args.js';
import { retimeSegment, sampleCount } from './fmp4-retime.js';

/*
 * The encoder runs at the guest's own priority, not below it: a frame's time is taken around its
 * capture, and a starved process can be descheduled for seconds between the two. At nice 10 beside
 * 6 busy loops (loopback Xvfb, colour changed every 0.4 s) frames carried times up to 3.9 s before
 * their content was drawn (25 frames in 24 s); at nice 0 within -0.16..+0.31 s (every frame).
 */
/** Restarts within this window without a finished segment count toward giving up. */
const FAILURE_WINDOW_MS = 30_000;
const MAX_QUICK_FAILURES = 5;
const START_FILE = 'capture-start-ms';
const PID_FILE = 'encoder.pid';
/** "index first count" a line per segment: which of the run's frames each segment holds. */
const SAMPLES_FILE = 'segment-samples';

interface Run {
  run: number;
  dir: string;
  startMs: number | null;
}

/** What the guest knows of a run's frames: their times, and which frames each segment holds. */
interface RunFrames {
  /** Times read so far from the run's frames file, and how many of its bytes that took. */
  times: number[];
  readBytes: number;
  timeBase: [number, number] | null;
  samples: Map<number, { first: number; count: number }>;
}

/**
 * VideoEncoder keeps one FFmpeg encoder of the desktop's screen running while a recording is
 * on: each (re)start is a new "run" in its own directory under `root` (the sandbox's /tmp, which
 * outlives a restarted guest, so a new guest finds the runs the old one left). The guest
 * restarts a dead encoder with backoff; after MAX_QUICK_FAILURES quick deaths it gives up
 * (`failed`, with FFmpeg's last words). Finished segments stay on disk until acknowledged.
 */
export class VideoEncoder {
  private state: VideoStatus['state'] = 'idle';
  private settings: VideoStartRequest | null = null;
  private current: Run | null = null;
  private child: ChildProcess | null = null;
  private restarts = 0;
  private failures: number[] = [];
  private error: string | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private exited: Promise<void> = Promise.resolve();
  /** Per run number; a run of an earlier guest is read back from its files. */
  private frames = new Map<number, RunFrames>();

  constructor(
    private readonly display: string,
    private readonly root: string,
    private readonly env: Record<string, string | undefined>,
  ) {}

  async start(request: VideoStartRequest): Promise<VideoStatus> {
    if (this.state === 'recording') return this.status();
    this.settings = request;
    this.state = 'recording';
    this.error = null;
    this.failures = [];
    await this.spawnRun();
    return this.status();
  }

  /** stop ends the encoder gracefully (SIGINT: FFmpeg closes its open segment), then lists. */
  async stop(): Promise<VideoStatus> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    if (this.state === 'recording') this.state = 'stopped';
    const child = this.child;
    if (child && child.exitCode === null) {
      child.kill('SIGINT');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await this.exited;
      clearTimeout(killer);
    }
    return this.status();
  }

  async status(): Promise<VideoStatus> {
    return {
      state: this.state,
      fps: this.settings?.fps ?? null,
      quality: this.settings?.quality ?? null,
      run: this.current?.run ?? null,
      encoder_pid: this.child?.exitCode === null ? (this.child.pid ?? null) : null,
      restarts: this.restarts,
      error: this.error,
      segments: await this.finishedSegments(),
    };
  }

  async segment(id: string): Promise<VideoSegmentData> {
    const file = this.fileOf(id);
    const raw = await readFile(file).catch(() => {
      throw new AppError('not_found', `no video segment ${id}`);
    });
    const body = await this.retimed(id, raw);
    return { id, bytes: body.length, data_base64: body.toString('base64') };
  }

  /**
   * retimed puts a media segment's frames at their capture times (the muxer's own times drift at
   * segment cuts, fmp4-retime.ts). A segment whose frames the guest cannot place (its times were
   * lost with an earlier guest) is served as FFmpeg wrote it.
   */
  private async retimed(id: string, raw: Buffer): Promise<Buffer> {
    const m = /^r(\d+)-(\d+)$/.exec(id);
    if (!m) return raw;
    const runNumber = Number(m[1]);
    const frames = await this.framesOf(runNumber);
    const span = frames.samples.get(Number(m[2]));
    if (!span) return raw;
    const times = frames.times.slice(span.first, span.first + span.count);
    if (times.length !== span.count) return raw;
    try {
      const dir = join(this.root, `run-${runNumber}`);
      const unitsPerMs = timescaleOf(await readFile(join(dir, RUN_FILES.init))) / 1000;
      const interval = 1000 / (this.settings?.fps ?? 5);
      const next = frames.times[span.first + span.count];
      // The last frame lasts until the next one (the one that began the next segment), across a
      // hole too: the video stays contiguous and the hole shows as one long frame, at its place.
      const gap = next === undefined ? interval : next - times.at(-1)!;
      const last = gap > 0 ? gap : interval;
      return Buffer.from(
        retimeSegment(
          raw,
          times.map((t) => Math.round(t * unitsPerMs)),
          Math.round(last * unitsPerMs),
        ),
      );
    } catch {
      return raw;
    }
  }

  private async framesOf(run: number): Promise<RunFrames> {
    const dir = join(this.root, `run-${run}`);
    let frames = this.frames.get(run);
    if (!frames) {
      const samples = new Map<number, { first: number; count: number }>();
      for (const line of (await readFile(join(dir, SAMPLES_FILE), 'utf8').catch(() => '')).split(
        '\n',
      )) {
        const [index, first, count] = line.split(' ').map(Number);
        if (count !== undefined && !Number.isNaN(count))
          samples.set(index!, { first: first!, count });
      }
      frames = { times: [], readBytes: 0, timeBase: null, samples };
      this.frames.set(run, frames);
    }
    await readNewFrames(join(dir, RUN_FILES.frames), frames);
    return frames;
  }

  /**
   * countSamples records which of the run's frames each closed segment holds, in playlist order,
   * before any is acknowledged (and deleted): a segment's first frame follows the previous one's.
   */
  private async countSamples(run: Run, entries: PlaylistEntry[]): Promise<RunFrames> {
    const frames = await this.framesOf(run.run);
    let next = 0;
    for (const entry of entries) {
      const known = frames.samples.get(entry.index);
      if (known) {
        next = known.first + known.count;
        continue;
      }
      const body = await readFile(join(run.dir, entry.file)).catch(() => null);
      if (!body) break; // gone uncounted: later segments cannot be placed
      let count: number;
      try {
        count = sampleCount(body);
      } catch {
        break;
      }
      frames.samples.set(entry.index, { first: next, count });
      await appendFile(join(run.dir, SAMPLES_FILE), `${entry.index} ${next} ${count}\n`);
      next += count;
    }
    return frames;
  }

  /** ack deletes stored segments, and a finished run's directory once none of its are left. */
  async ack(ids: readonly string[]): Promise<VideoStatus> {
    for (const id of ids) {
      if (id.endsWith('-init')) continue;
      await rm(this.fileOf(id), { force: true });
    }
    for (const run of await this.runs()) {
      if (run.run === this.current?.run && this.state === 'recording') continue;
      const left = (await readdir(run.dir)).filter((f) => RUN_FILES.segment.test(f));
      const isClosed = run.run !== this.current?.run || this.child?.exitCode !== null;
      if (left.length === 0 && isClosed) {
        await rm(run.dir, { recursive: true, force: true });
        this.frames.delete(run.run); // its frame times went with its files
      }
    }
    return this.status();
  }

  /** dispose stops the encoder when the guest closes (the files stay for the next guest). */
  async dispose(): Promise<void> {
    await this.stop();
  }

  private fileOf(id: string): string {
    const m = /^r(\d+)-(init|\d+)$/.exec(id);
    if (!m) throw new AppError('not_found', `no video segment ${id}`);
    const name = m[2] === 'init' ? RUN_FILES.init : `seg_${m[2]!.padStart(6, '0')}.m4s`;
    return join(this.root, `run-${m[1]}`, name);
  }

  private async runs(): Promise<Run[]> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    const runs: Run[] = [];
    for (const name of names) {
      const m = /^run-(\d+)$/.exec(name);
      if (!m) continue;
      const dir = join(this.root, name);
      const start = await readFile(join(dir, START_FILE), 'utf8').catch(() => '');
      runs.push({ run: Number(m[1]), dir, startMs: start ? Number(start) : null });
    }
    return runs.sort((a, b) => a.run - b.run);
  }

  private async finishedSegments(): Promise<VideoSegment[]> {
    const out: VideoSegment[] = [];
    for (const run of await this.runs()) {
      const startMs = run.run === this.current?.run ? this.current.startMs : run.startMs;
      if (startMs === null) continue;
      const playlist = await readFile(join(run.dir, RUN_FILES.playlist), 'utf8').catch(() => '');
      const entries = parsePlaylist(playlist);
      const frames = await this.countSamples(run, entries);
      for (const entry of entries) {
        const info = await stat(join(run.dir, entry.file)).catch(() => null);
        if (!info) continue; // acknowledged already
        // Its first frame's capture time when known (the playlist's offsets lose holes).
        const span = frames.samples.get(entry.index);
        const first = span ? frames.times[span.first] : undefined;
        out.push({
          id: `r${run.run}-${entry.index}`,
          run: run.run,
          index: entry.index,
          run_started_at_ms: startMs,
          started_at_ms: startMs + (first ?? entry.offsetMs),
          duration_ms: entry.durationMs,
          bytes: info.size,
          init_id: `r${run.run}-init`,
        });
      }
    }
    return out;
  }

  private async spawnRun(): Promise<void> {
    const settings = this.settings!;
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    const previous = await this.runs();
    // A guest killed outright leaves its encoder running: one encoder per desktop.
    for (const old of previous) await stopOrphan(join(old.dir, PID_FILE));
    const number = Math.max(this.current?.run ?? -1, ...previous.map((r) => r.run)) + 1;
    const run: Run = { run: number, dir: join(this.root, `run-${number}`), startMs: null };
    await mkdir(run.dir, { recursive: true, mode: 0o700 });
    this.current = run;
    let log = '';
    const child = spawn('ffmpeg', ffmpegArgs(this.display, run.dir, settings), {
      env: this.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.child = child;
    if (child.pid) void writeFile(join(run.dir, PID_FILE), String(child.pid)).catch(() => {});
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      log = (log + chunk).slice(-8_000);
      if (run.startMs === null) {
        const start = captureStartOf(log);
        if (start !== null) {
          run.startMs = start;
          void writeFile(join(run.dir, START_FILE), String(start)).catch(() => {});
        }
      }
    });
    this.exited = new Promise((resolve) => {
      child.on('error', (err) => {
        log += `\n${err.message}`;
      });
      child.on('close', (code, signal) => {
        resolve();
        if (this.child === child) this.onExit(run, code, signal, log);
      });
    });
  }

  private onExit(run: Run, code: number | null, signal: NodeJS.Signals | null, log: string) {
    if (this.state !== 'recording') return;
    const now = Date.now();
    const hadSegment = existsSync(join(run.dir, RUN_FILES.playlist));
    this.failures = hadSegment
      ? []
      : [...this.failures, now].filter((t) => now - t < FAILURE_WINDOW_MS);
    if (this.failures.length >= MAX_QUICK_FAILURES) {
      this.state = 'failed';
      const last = log.trim().split('\n').slice(-3).join(' | ');
      this.error =
        `the encoder exited (${signal ?? code}) ${MAX_QUICK_FAILURES} times: ${last}`.slice(
          0,
          1000,
        );
      return;
    }
    this.restarts++;
    const delay = Math.min(5_000, 250 * 2 ** this.failures.length);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.state === 'recording') void this.spawnRun().catch(() => {});
    }, delay);
  }
}

/** stopOrphan interrupts an encoder a previous guest left, if that pid is still an FFmpeg. */
async function stopOrphan(pidFile: string): Promise<void> {
  const pid = Number(await readFile(pidFile, 'utf8').catch(() => ''));
  if (!Number.isInteger(pid) || pid <= 1) return;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!cmdline.startsWith('ffmpeg')) return;
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    // Gone meanwhile.
  }
}

/**
 * readNewFrames reads what the encoder appended to a run's frames file since the last read
 * (whole lines only: FFmpeg may be mid-line), so a long recording is not re-read on every call.
 */
async function readNewFrames(file: string, frames: RunFrames): Promise<void> {
  const handle = await open(file, 'r').catch(() => null);
  if (!handle) return;
  try {
    const { size } = await handle.stat();
    if (size <= frames.readBytes) return;
    const buf = Buffer.alloc(size - frames.readBytes);
    const { bytesRead } = await handle.read(buf, 0, buf.length, frames.readBytes);
    const text = buf.subarray(0, bytesRead).toString('utf8');
    const whole = text.slice(0, text.lastIndexOf('\n') + 1);
    frames.timeBase ??= frameTimeBaseOf(whole);
    if (!frames.timeBase) return; // the header is not written yet
    frames.times.push(...frameTimesOf(whole, frames.timeBase));
    frames.readBytes += Buffer.byteLength(whole);
  } finally {
    await handle.close();
  }
}
