import { AppError, ErrorEnvelope } from '@cubicle/contract/errors';
import {
  ARCHIVE_BINARY_TYPE,
  ARCHIVE_CHUNKS_HEADER,
  ArchiveReadResponse,
  ArchiveStageResponse,
  GuestRoutes,
  formatChunkSpans,
  parseChunkSpans,
  type ArchiveChunkRef,
  type GuestOperation,
} from '@cubicle/contract/guest';
import type WebSocket from 'ws';
import type { z } from 'zod';
import { open, type Keyring } from '../crypto/keyring.js';
import type { GuestClientDeps } from '../resources.js';
import {
  findLiveGuest,
  liveGuestOrThrow,
  type GuestSql,
  type LiveGuest,
} from './find-live-guest.js';
import {
  GuestTimeoutError,
  openGuestSocket,
  requestGuest,
  type GuestHttpAnswer,
  type RawGuestBody,
} from './guest-transport.js';

type Routes = typeof GuestRoutes;

/** Operations answered with a JSON body the contract describes (binary answers excluded). */
export type GuestCallOperation = {
  [K in GuestOperation]: Routes[K] extends { transport: 'http'; response: z.ZodType } ? K : never;
}[GuestOperation];
/** Operations that are a stream of JSON frames. */
export type GuestStreamOperation = {
  [K in GuestOperation]: Routes[K] extends { transport: 'websocket' } ? K : never;
}[GuestOperation];

/** The body an operation takes (undefined for a GET). */
export type GuestRequestOf<Op extends GuestCallOperation> = Routes[Op]['request'] extends z.ZodType
  ? z.input<Routes[Op]['request']>
  : undefined;
/** What an operation answers, as its contract schema parsed it. */
export type GuestResponseOf<Op extends GuestCallOperation> = z.infer<Routes[Op]['response']>;

export interface GuestCallOptions {
  /** The whole exchange; past it the call fails `timeout` (it may have been delivered). */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Told when the guest's answer has arrived, before it is checked (a call's timing). */
  onAnswered?: (() => void) | undefined;
}

/** One chunk of the guest archive with its id (SHA-256 of the bytes). */
export interface ChunkBytes {
  hash: string;
  bytes: Uint8Array;
}

/**
 * GuestClient talks to one live claim's guest driver. Every failure is an AppError: the guest's
 * own error envelope rebuilt (fromEnvelope), or `timeout` / `backend_unavailable` for the way
 * there and back, so callers answer with `toEnvelope` and never write an envelope by hand.
 */
export interface GuestClient {
  readonly guest: LiveGuest;
  /** call runs one JSON operation and answers its 200 body, checked against the contract. */
  call<Op extends GuestCallOperation>(
    op: Op,
    body: GuestRequestOf<Op>,
    options: GuestCallOptions,
  ): Promise<GuestResponseOf<Op>>;
  /**
   * readChunks is `archive.read` in its binary form: the chunks' bytes, in request order (the
   * guest may answer fewer than asked, never none), each with its id.
   */
  readChunks(chunks: ArchiveChunkRef[], options: GuestCallOptions): Promise<ChunkBytes[]>;
  /** stageChunks is `archive.stage` in its binary form. */
  stageChunks(
    blobs: readonly ChunkBytes[],
    options: GuestCallOptions,
  ): Promise<ArchiveStageResponse>;
  /** stream opens one stream operation (a run's shell); its frames are the route's schemas. */
  stream(op: GuestStreamOperation, options: { maxPayload: number }): WebSocket;
}

/**
 * guestClientFor looks up the tenant's live claim and its guest (findLiveGuest) and answers a
 * client for it, or throws the AppError a caller gets (liveGuestOrThrow). `sql` lets a caller
 * holding a transaction (a secrets delivery under its advisory lock) look up on its connection.
 */
export async function guestClientFor(
  deps: GuestClientDeps,
  target: { tenantId: string; claimId: string; sandboxId?: string | undefined; now: Date },
  sql: GuestSql = deps.db,
): Promise<GuestClient> {
  const lookup = await findLiveGuest(sql, target, true);
  return guestClientOf(deps.keyring, liveGuestOrThrow(lookup, target));
}

/**
 * guestClientOf makes the client of a guest a lookup found live. It is the one place a guest
 * token is opened, and its transport the one way a connection to a guest is made (a local
 * sandbox's socket only through the peer-checked door, connectSandboxSocket).
 */
export function guestClientOf(keyring: Keyring, guest: LiveGuest): GuestClient {
  const { endpoint, tokenCiphertext } = guest;
  if (!endpoint || !tokenCiphertext)
    throw new AppError('backend_unavailable', 'the sandbox has no guest driver endpoint');
  const token = open(keyring, tokenCiphertext, guest.sandboxId);
  return {
    guest,
    call: (op, body, options) => callGuest(endpoint, token, op, body, options),
    readChunks: (chunks, options) => readGuestChunks(endpoint, token, chunks, options),
    stageChunks: (blobs, options) => stageGuestChunks(endpoint, token, blobs, options),
    stream(op, options) {
      return openGuestSocket({
        endpoint,
        token,
        path: GuestRoutes[op].path,
        maxPayload: options.maxPayload,
      });
    },
  };
}

/** A guest reached without a claim: a desktop the worker starts (primes) or checks while warm. */
export type SandboxGuestClient = Pick<GuestClient, 'call' | 'readChunks' | 'stageChunks'>;

/**
 * sandboxGuestClient talks to a sandbox's guest by the endpoint and token its backend reported,
 * before any claim holds it (provisioning primes the desktop) or while it waits warm (the
 * primed-window check). Same transport and checks as guestClientOf.
 */
export function sandboxGuestClient(endpoint: string, token: string): SandboxGuestClient {
  return {
    call: (op, body, options) => callGuest(endpoint, token, op, body, options),
    readChunks: (chunks, options) => readGuestChunks(endpoint, token, chunks, options),
    stageChunks: (blobs, options) => stageGuestChunks(endpoint, token, blobs, options),
  };
}

async function callGuest<Op extends GuestCallOperation>(
  endpoint: string,
  token: string,
  op: Op,
  body: GuestRequestOf<Op>,
  options: GuestCallOptions,
): Promise<GuestResponseOf<Op>> {
  const route = GuestRoutes[op] as Extract<Routes[GuestCallOperation], { transport: 'http' }>;
  const answer = await exchange(endpoint, token, route, body, options);
  options.onAnswered?.();
  const checked = (route.response as z.ZodType).safeParse(bodyOrThrow(answer, 'the guest driver'));
  // A guest answer outside the contract is never passed on: the caller could act on a lie.
  if (!checked.success)
    throw new AppError('backend_unavailable', 'the guest driver answered outside the contract');
  return checked.data as never;
}

const outsideContract = () =>
  new AppError('backend_unavailable', 'the guest driver answered outside the contract');

/**
 * readGuestChunks asks archive.read for raw bytes and splits them by the chunk header. A guest
 * older than the binary form ignores the Accept header and answers the JSON form (base64), which
 * is taken as it is: a newer control plane still reads from a desktop image built before.
 */
async function readGuestChunks(
  endpoint: string,
  token: string,
  chunks: ArchiveChunkRef[],
  options: GuestCallOptions,
): Promise<ChunkBytes[]> {
  const answer = await exchange(endpoint, token, GuestRoutes['archive.read'], { chunks }, options, {
    accept: ARCHIVE_BINARY_TYPE,
  });
  if (answer.status === 200 && !answer.bytes) {
    const json = ArchiveReadResponse.safeParse(answer.body);
    if (!json.success || json.data.blobs.length === 0) throw outsideContract();
    return json.data.blobs.map((b, i) => {
      if (b.hash !== chunks[i]?.hash) throw outsideContract();
      return { hash: b.hash, bytes: Buffer.from(b.data, 'base64') };
    });
  }
  if (answer.status !== 200 || !answer.bytes) bodyOrThrow(answer, 'the guest driver');
  const bytes = answer.bytes ?? Buffer.alloc(0);
  const header = answer.headers[ARCHIVE_CHUNKS_HEADER];
  const spans = parseChunkSpans(
    typeof header === 'string' ? header : undefined,
    bytes.length,
    chunks.length,
  );
  if (!spans || spans.length === 0) throw outsideContract();
  let at = 0;
  return spans.map((s, i) => {
    // The guest answers a prefix of what was asked, in order.
    if (s.hash !== chunks[i]!.hash) throw outsideContract();
    const part = bytes.subarray(at, at + s.length);
    at += s.length;
    return { hash: s.hash, bytes: part };
  });
}

/**
 * stageGuestChunks sends archive.stage its chunks raw, with their ids and lengths in a header. A
 * guest older than the binary form refuses the body (415 unsupported_media_type): the same chunks
 * go again in the JSON form (base64), which every guest with the archive takes.
 */
async function stageGuestChunks(
  endpoint: string,
  token: string,
  blobs: readonly ChunkBytes[],
  options: GuestCallOptions,
): Promise<ArchiveStageResponse> {
  const raw: RawGuestBody = {
    bytes: Buffer.concat(blobs.map((b) => b.bytes)),
    contentType: ARCHIVE_BINARY_TYPE,
    headers: {
      [ARCHIVE_CHUNKS_HEADER]: formatChunkSpans(
        blobs.map((b) => ({ hash: b.hash, length: b.bytes.byteLength })),
      ),
    },
  };
  const route = GuestRoutes['archive.stage'];
  let answer = await exchange(endpoint, token, route, undefined, options, { raw });
  if (answer.status === 415) {
    const blobsJson = blobs.map((b) => ({
      hash: b.hash,
      data: Buffer.from(b.bytes.buffer, b.bytes.byteOffset, b.bytes.byteLength).toString('base64'),
    }));
    answer = await exchange(endpoint, token, route, { blobs: blobsJson }, options);
  }
  const checked = ArchiveStageResponse.safeParse(bodyOrThrow(answer, 'the guest driver'));
  if (!checked.success) throw outsideContract();
  return checked.data;
}

/** exchange makes one request and turns a failure on the way there and back into an AppError. */
async function exchange(
  endpoint: string,
  token: string,
  route: { method: 'GET' | 'POST'; path: string },
  body: unknown,
  options: GuestCallOptions,
  extra: { raw?: RawGuestBody; accept?: string } = {},
): Promise<GuestHttpAnswer> {
  try {
    return await requestGuest({
      endpoint,
      token,
      method: route.method,
      path: route.path,
      body,
      ...extra,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
  } catch (err) {
    if (err instanceof GuestTimeoutError)
      throw new AppError(
        'timeout',
        'the guest did not answer in time; the call may have been delivered: observe before retrying',
      );
    throw new AppError('backend_unavailable', 'the guest driver could not be reached');
  }
}

/**
 * bodyOrThrow answers a 200 answer's body and throws any other as the AppError its envelope
 * carries (fromEnvelope), or `backend_unavailable` when `from` answered without one. Guest
 * answers and the worker's outcomes of guest calls cross back into errors here alone.
 */
export function bodyOrThrow(answer: { status: number; body: unknown }, from: string): unknown {
  if (answer.status === 200) return answer.body;
  const envelope = ErrorEnvelope.safeParse(answer.body);
  if (!envelope.success)
    throw new AppError(
      'backend_unavailable',
      `${from} answered ${answer.status} without an error envelope`,
    );
  throw AppError.fromEnvelope(envelope.data);
}
