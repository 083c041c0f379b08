import { randomBytes } from 'node:crypto';
import { appendFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import {
  GUEST_PROTOCOL_VERSION,
  RECORDING_JSONL_FILE,
  RecordingEntry,
  type RecordingStartRequest,
  type RecordingStatus,
} from '@cubicle/contract/guest';
import { AppError } from '@cubicle/contract/errors';
import { createRedactor, type Redactor } from '@cubicle/contract/redact';
import { writeTar } from './write-tar.js';

interface Session {
  id: string;
  dir: string;
  startedAt: string;
  stoppedAt?: string;
  screenshots: boolean;
  entries: number;
}

/** EntryInput is a RecordingEntry before the recorder numbers it and stores its frames. */
export type EntryInput = Omit<
  RecordingEntry,
  'type' | 'seq' | 'before_screenshot' | 'after_screenshot'
> & { before?: Buffer | null; after?: Buffer | null };

const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const frame = (seq: number, moment: 'before' | 'after') =>
  `${String(seq).padStart(6, '0')}-${moment}.png`;

/** The secret values a recording must not hold (SecretFiles: what the guest was given). */
export interface SecretRedaction {
  /** The values known now (cheap: per appended entry). */
  redactor(): Redactor;
  /** Also the values on disk that this process did not write (per archive). */
  fullRedactor(): Promise<Redactor>;
}

const nothing = createRedactor([]);
const NO_SECRETS: SecretRedaction = { redactor: () => nothing, fullRedactor: async () => nothing };

/**
 * Recorder keeps the session's trajectory in a private temp dir: `trajectory.jsonl` (a header,
 * then one validated RecordingEntry per action) and PNG frames. Only the last recording is kept;
 * starting a new one deletes the previous one's files. Secret values are redacted by value
 * (raw, base64, URL-encoded, JSON-escaped → `[secret:NAME]`) from each line as it is written and
 * again from the whole trajectory when it is archived, so a value given to the desktop after an
 * action was recorded is gone from the archive too. Frames are pixels: a value drawn on screen
 * cannot be found by value (secure fields show bullets; see redactAction for typed text).
 */
export class Recorder {
  private session: Session | null = null;
  private appending: Promise<void> = Promise.resolve();

  constructor(private readonly secrets: SecretRedaction = NO_SECRETS) {}

  get isActive(): boolean {
    return this.session !== null && this.session.stoppedAt === undefined;
  }

  get wantsScreenshots(): boolean {
    return this.isActive && this.session!.screenshots;
  }

  async start(req: RecordingStartRequest): Promise<RecordingStatus> {
    if (this.isActive) throw new AppError('conflict', 'a recording is already running');
    await this.dispose();
    const id = `rec_${[...randomBytes(16)].map((b) => ALNUM[b % 36]).join('')}`;
    const dir = await mkdtemp(join(tmpdir(), 'cubicle-recording-'));
    const startedAt = new Date().toISOString();
    await writeFile(
      join(dir, RECORDING_JSONL_FILE),
      JSON.stringify({
        type: 'recording',
        recording_id: id,
        protocol_version: GUEST_PROTOCOL_VERSION,
        started_at: startedAt,
      }) + '\n',
    );
    this.session = { id, dir, startedAt, screenshots: req.screenshots ?? true, entries: 0 };
    return this.status();
  }

  stop(): RecordingStatus {
    if (!this.isActive) throw new AppError('conflict', 'no recording is running');
    this.session!.stoppedAt = new Date().toISOString();
    return this.status();
  }

  status(): RecordingStatus {
    const s = this.session!;
    return {
      recording_id: s.id,
      active: s.stoppedAt === undefined,
      started_at: s.startedAt,
      ...(s.stoppedAt ? { stopped_at: s.stoppedAt } : {}),
      entry_count: s.entries,
    };
  }

  /**
   * append stores one action; the entry is validated, so a secret-bearing shape cannot slip in.
   * Appends run one after another, so concurrent actions get distinct, ordered sequence numbers.
   */
  append(input: EntryInput): Promise<void> {
    const next = this.appending.then(() => this.appendNow(input));
    this.appending = next.catch(() => undefined);
    return next;
  }

  private async appendNow(input: EntryInput): Promise<void> {
    const s = this.session;
    if (!s || s.stoppedAt !== undefined) return;
    const seq = s.entries + 1;
    const { before, after, ...rest } = input;
    const entry = RecordingEntry.parse({
      type: 'action',
      seq,
      ...rest,
      ...(before ? { before_screenshot: frame(seq, 'before') } : {}),
      ...(after ? { after_screenshot: frame(seq, 'after') } : {}),
    });
    if (before) await writeFile(join(s.dir, frame(seq, 'before')), before);
    if (after) await writeFile(join(s.dir, frame(seq, 'after')), after);
    const line = this.secrets.redactor().redact(JSON.stringify(entry));
    await appendFile(join(s.dir, RECORDING_JSONL_FILE), line + '\n');
    s.entries = seq;
  }

  /** archive is the last recording (running or stopped) as tar.gz: the trajectory, then frames. */
  async archive(): Promise<Buffer> {
    const s = this.session;
    if (!s) throw new AppError('not_found', 'nothing has been recorded');
    const names = (await readdir(s.dir)).filter((n) => n !== RECORDING_JSONL_FILE).sort();
    const redactor = await this.secrets.fullRedactor();
    const trajectory = await readFile(join(s.dir, RECORDING_JSONL_FILE), 'utf8');
    const frames = await Promise.all(
      names.map(async (name) => ({ name, data: await readFile(join(s.dir, name)) })),
    );
    const files = [
      { name: RECORDING_JSONL_FILE, data: Buffer.from(redactor.redact(trajectory), 'utf8') },
      ...frames,
    ];
    return gzipSync(writeTar(files), { level: 1 });
  }

  async dispose(): Promise<void> {
    const s = this.session;
    this.session = null;
    if (s) await rm(s.dir, { recursive: true, force: true });
  }
}
