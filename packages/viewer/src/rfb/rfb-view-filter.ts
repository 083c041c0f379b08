// The client→server half of RFB (RFC 6143) as a view-only client may speak it. The proxy runs
// every byte a `view` ticket's client sends through RfbViewFilter; only the handshake and the
// three messages that ask for pixels reach the VNC server. Nothing here trusts the client's own
// view-only flag: a hostile client speaking raw RFB is the case this exists for.

/** RfbProtocolViolation: the client sent something a view-only client may not; close the stream. */
export class RfbProtocolViolation extends Error {
  override name = 'RfbProtocolViolation';
}

/** Client message types (RFC 6143 §7.5) the filter knows. */
const MSG = {
  setPixelFormat: 0,
  setEncodings: 2,
  framebufferUpdateRequest: 3,
  keyEvent: 4,
  pointerEvent: 5,
  clientCutText: 6,
} as const;

/** SetEncodings may list at most this many encodings (noVNC sends about 20). */
export const MAX_ENCODINGS = 1024;
/** ClientCutText over this size is a violation (it is dropped in view mode, never buffered). */
export const MAX_CUT_TEXT_BYTES = 10 * 1024 * 1024;

/**
 * Pseudo-encodings that would make the server expect client messages a viewer may not send
 * (Fence 248, EnableContinuousUpdates 150, SetDesktopSize 251, QEMU 255, xvp 250, gii 253).
 * They are removed from SetEncodings so a well-behaved viewer never gets into a state where it
 * must send one of those messages; a client that sends one anyway is cut off.
 */
export const STRIPPED_ENCODINGS: ReadonlySet<number> = new Set([
  -312, // Fence
  -313, // ContinuousUpdates
  -308, // ExtendedDesktopSize (enables SetDesktopSize: a viewer must not resize the desktop)
  -258, // QEMU Extended Key Event
  -259, // QEMU Audio
  -309, // xvp (shutdown/reboot requests)
  -305, // gii (input devices)
]);

/** The protocol versions a client may answer with; only security type None is spoken here. */
const VERSIONS = new Set(['RFB 003.003\n', 'RFB 003.007\n', 'RFB 003.008\n']);
const SECURITY_NONE = 1;

type State =
  | { kind: 'version' }
  | { kind: 'security' }
  | { kind: 'client_init' }
  | { kind: 'messages' }
  | { kind: 'skip'; remaining: number; isForwarded: boolean }
  | { kind: 'violated'; reason: string };

export interface FilterResult {
  /** Bytes to send to the VNC server (possibly empty). */
  forward: Buffer;
  /** Client messages dropped in this chunk (KeyEvent, PointerEvent, ClientCutText). */
  dropped: number;
  /** Input messages forwarded in this chunk (only with `forwardInput`: a handoff's control). */
  input: number;
}

export interface FilterOptions {
  /**
   * Forward KeyEvent, PointerEvent and ClientCutText instead of dropping them, and count them:
   * a control stream bound to a handoff speaks the same checked protocol, and its input renews
   * the handoff's lease. Switch it off (stopInput) and the stream is view-only from then on.
   */
  forwardInput?: boolean;
}

const EMPTY = Buffer.alloc(0);

/**
 * RfbViewFilter parses the client→server RFB byte stream incrementally, in chunks split at any
 * boundary, and returns what may be forwarded: the ProtocolVersion (3.3, 3.7 or 3.8), the
 * security type None, ClientInit with the shared flag forced to 1 (a viewer must never make
 * the server drop other clients), then only SetPixelFormat, SetEncodings (minus the
 * pseudo-encodings above) and FramebufferUpdateRequest. KeyEvent, PointerEvent and
 * ClientCutText are dropped (forwarded and counted with `forwardInput`); anything unknown or malformed throws RfbProtocolViolation, and so
 * does every later push. It holds at most one incomplete message (≤ 4 + 4·MAX_ENCODINGS bytes).
 */
export class RfbViewFilter {
  private state: State = { kind: 'version' };
  private pending: Buffer = EMPTY;
  private is33 = false;
  private isForwardingInput: boolean;

  constructor(options: FilterOptions = {}) {
    this.isForwardingInput = options.forwardInput ?? false;
  }

  /** stopInput makes the stream view-only from the next byte on (its handoff ended). */
  stopInput() {
    this.isForwardingInput = false;
  }

  push(chunk: Uint8Array): FilterResult {
    if (this.state.kind === 'violated') throw new RfbProtocolViolation(this.state.reason);
    const bytes = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const buf = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes]);
    const out: Buffer[] = [];
    let dropped = 0;
    let input = 0;
    let at = 0;
    try {
      for (;;) {
        const left = buf.length - at;
        if (left === 0) break;
        const step = this.step(buf, at, left);
        if (step === null) break; // an incomplete message: wait for more bytes
        if (step.forward) out.push(step.forward);
        if (step.dropped) dropped++;
        if (step.input) input++;
        at += step.consumed;
      }
    } catch (error) {
      if (error instanceof RfbProtocolViolation)
        this.state = { kind: 'violated', reason: error.message };
      throw error;
    }
    this.pending = at < buf.length ? Buffer.from(buf.subarray(at)) : EMPTY;
    return { forward: out.length === 1 ? out[0]! : Buffer.concat(out), dropped, input };
  }

  /** step consumes one unit at `at`, or returns null when more bytes are needed for it. */
  private step(
    buf: Buffer,
    at: number,
    left: number,
  ): { consumed: number; forward?: Buffer; dropped?: boolean; input?: boolean } | null {
    const state = this.state;
    switch (state.kind) {
      case 'version': {
        if (left < 12) return null;
        const version = buf.toString('latin1', at, at + 12);
        if (!VERSIONS.has(version)) throw new RfbProtocolViolation('unsupported protocol version');
        this.is33 = version === 'RFB 003.003\n';
        // In 3.3 the server picks the security type; the client's next bytes are ClientInit.
        this.state = this.is33 ? { kind: 'client_init' } : { kind: 'security' };
        return { consumed: 12, forward: buf.subarray(at, at + 12) };
      }
      case 'security': {
        if (buf[at] !== SECURITY_NONE) throw new RfbProtocolViolation('only security type None');
        this.state = { kind: 'client_init' };
        return { consumed: 1, forward: buf.subarray(at, at + 1) };
      }
      case 'client_init':
        this.state = { kind: 'messages' };
        return { consumed: 1, forward: Buffer.from([1]) };
      case 'skip': {
        const n = Math.min(left, state.remaining);
        state.remaining -= n;
        if (state.remaining === 0) this.state = { kind: 'messages' };
        return state.isForwarded
          ? { consumed: n, forward: buf.subarray(at, at + n) }
          : { consumed: n };
      }
      case 'messages':
        return this.message(buf, at, left);
      case 'violated':
        throw new RfbProtocolViolation(state.reason);
      default:
        return state satisfies never;
    }
  }

  private message(buf: Buffer, at: number, left: number) {
    const type = buf[at]!;
    switch (type) {
      case MSG.setPixelFormat: {
        if (left < 20) return null;
        checkPixelFormat(buf, at + 4);
        return { consumed: 20, forward: buf.subarray(at, at + 20) };
      }
      case MSG.setEncodings: {
        if (left < 4) return null;
        const count = buf.readUInt16BE(at + 2);
        if (count > MAX_ENCODINGS) throw new RfbProtocolViolation('too many encodings');
        const size = 4 + 4 * count;
        if (left < size) return null;
        return { consumed: size, forward: keptEncodings(buf, at, count) };
      }
      case MSG.framebufferUpdateRequest: {
        if (left < 10) return null;
        if (buf[at + 1]! > 1) throw new RfbProtocolViolation('bad incremental flag');
        return { consumed: 10, forward: buf.subarray(at, at + 10) };
      }
      case MSG.keyEvent: {
        if (left < 8) return null;
        return this.inputOf(buf, at, 8);
      }
      case MSG.pointerEvent: {
        if (left < 6) return null;
        return this.inputOf(buf, at, 6);
      }
      case MSG.clientCutText: {
        if (left < 8) return null;
        // Negative lengths are the Extended Clipboard format (|length| bytes follow).
        const length = Math.abs(buf.readInt32BE(at + 4));
        if (length > MAX_CUT_TEXT_BYTES) throw new RfbProtocolViolation('clipboard too large');
        const isForwarded = this.isForwardingInput;
        if (length > 0) this.state = { kind: 'skip', remaining: length, isForwarded };
        return this.inputOf(buf, at, 8);
      }
      default:
        throw new RfbProtocolViolation(`client message type ${type} is not allowed for viewers`);
    }
  }

  /** inputOf consumes one input message: forwarded and counted, or dropped (view-only). */
  private inputOf(buf: Buffer, at: number, size: number) {
    return this.isForwardingInput
      ? { consumed: size, forward: buf.subarray(at, at + size), input: true }
      : { consumed: size, dropped: true };
  }
}

/** checkPixelFormat rejects pixel formats no server would accept (RFC 6143 §7.4). */
function checkPixelFormat(buf: Buffer, at: number) {
  const bpp = buf[at]!;
  const depth = buf[at + 1]!;
  const bigEndian = buf[at + 2]!;
  const trueColour = buf[at + 3]!;
  if (![8, 16, 32].includes(bpp) || depth === 0 || depth > bpp || bigEndian > 1 || trueColour > 1)
    throw new RfbProtocolViolation('malformed pixel format');
}

/** keptEncodings re-emits a SetEncodings without the stripped pseudo-encodings. */
function keptEncodings(buf: Buffer, at: number, count: number): Buffer {
  const kept: number[] = [];
  for (let i = 0; i < count; i++) {
    const encoding = buf.readInt32BE(at + 4 + 4 * i);
    if (!STRIPPED_ENCODINGS.has(encoding)) kept.push(encoding);
  }
  if (kept.length === count) return buf.subarray(at, at + 4 + 4 * count);
  const out = Buffer.alloc(4 + 4 * kept.length);
  out[0] = MSG.setEncodings;
  out.writeUInt16BE(kept.length, 2);
  kept.forEach((encoding, i) => out.writeInt32BE(encoding, 4 + 4 * i));
  return out;
}
