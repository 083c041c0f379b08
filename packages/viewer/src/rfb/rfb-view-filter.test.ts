import { describe, expect, it } from 'vitest';
import {
  MAX_CUT_TEXT_BYTES,
  MAX_ENCODINGS,
  RfbProtocolViolation,
  RfbViewFilter,
  STRIPPED_ENCODINGS,
} from './rfb-view-filter.js';

const V38 = Buffer.from('RFB 003.008\n', 'latin1');
const V37 = Buffer.from('RFB 003.007\n', 'latin1');
const V33 = Buffer.from('RFB 003.003\n', 'latin1');

const pixelFormat = (bpp = 32, depth = 24) => {
  const b = Buffer.alloc(20);
  b[0] = 0;
  b.set([bpp, depth, 0, 1], 4);
  b.writeUInt16BE(255, 8);
  b.writeUInt16BE(255, 10);
  b.writeUInt16BE(255, 12);
  b.set([16, 8, 0], 14);
  return b;
};
const setEncodings = (encodings: number[]) => {
  const b = Buffer.alloc(4 + 4 * encodings.length);
  b[0] = 2;
  b.writeUInt16BE(encodings.length, 2);
  encodings.forEach((e, i) => b.writeInt32BE(e, 4 + 4 * i));
  return b;
};
const fbur = (incremental = 1) => {
  const b = Buffer.alloc(10);
  b[0] = 3;
  b[1] = incremental;
  b.writeUInt16BE(1280, 6);
  b.writeUInt16BE(800, 8);
  return b;
};
const key = (down = 1, keysym = 0xff0d) => {
  const b = Buffer.alloc(8);
  b[0] = 4;
  b[1] = down;
  b.writeUInt32BE(keysym, 4);
  return b;
};
const pointer = (mask = 1, x = 100, y = 200) => {
  const b = Buffer.alloc(6);
  b[0] = 5;
  b[1] = mask;
  b.writeUInt16BE(x, 2);
  b.writeUInt16BE(y, 4);
  return b;
};
const cutText = (text: string | Buffer, extended = false) => {
  const body = Buffer.isBuffer(text) ? text : Buffer.from(text, 'latin1');
  const head = Buffer.alloc(8);
  head[0] = 6;
  head.writeInt32BE(extended ? -body.length : body.length, 4);
  return Buffer.concat([head, body]);
};
const handshake38 = (shared = 0) => Buffer.concat([V38, Buffer.from([1, shared])]);

/** feed pushes chunks and returns everything forwarded plus the drop count. */
function feed(filter: RfbViewFilter, chunks: Buffer[]) {
  const out: Buffer[] = [];
  let dropped = 0;
  for (const c of chunks) {
    const r = filter.push(c);
    out.push(r.forward);
    dropped += r.dropped;
  }
  return { forward: Buffer.concat(out), dropped };
}

/** splits cuts a stream into chunks at the given sizes (cycled). */
function splits(stream: Buffer, sizes: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  let at = 0;
  for (let i = 0; at < stream.length; i++) {
    const n = sizes[i % sizes.length]!;
    chunks.push(stream.subarray(at, at + n));
    at += n;
  }
  return chunks;
}

describe('RfbViewFilter handshake', () => {
  it('forwards a 3.8 handshake with security None and forces the shared flag on', () => {
    const r = feed(new RfbViewFilter(), [handshake38(0)]);
    expect(r.forward).toEqual(Buffer.concat([V38, Buffer.from([1, 1])]));
    expect(r.dropped).toBe(0);
  });

  it('accepts 3.7 the same way and 3.3 without a security byte', () => {
    expect(feed(new RfbViewFilter(), [V37, Buffer.from([1, 0])]).forward).toEqual(
      Buffer.concat([V37, Buffer.from([1, 1])]),
    );
    // 3.3: the server dictates the security type; the client's next byte is ClientInit.
    expect(feed(new RfbViewFilter(), [V33, Buffer.from([0])]).forward).toEqual(
      Buffer.concat([V33, Buffer.from([1])]),
    );
  });

  it('keeps a shared flag that is already 1', () => {
    expect(feed(new RfbViewFilter(), [handshake38(1)]).forward.at(-1)).toBe(1);
  });

  it.each([['RFB 004.001\n'], ['RFB 003.889\n'], ['GET / HTTP/1.1'], ['RFB 003.008\r']])(
    'refuses protocol version %j',
    (version) => {
      expect(() => new RfbViewFilter().push(Buffer.from(version, 'latin1'))).toThrow(
        RfbProtocolViolation,
      );
    },
  );

  it('refuses any security type but None (the ticket is the authentication)', () => {
    for (const type of [0, 2, 16, 19, 255]) {
      const f = new RfbViewFilter();
      f.push(V38);
      expect(() => f.push(Buffer.from([type]))).toThrow(/security type None/);
    }
  });

  it('forwards nothing until a whole version string has arrived', () => {
    const f = new RfbViewFilter();
    expect(f.push(V38.subarray(0, 11)).forward.length).toBe(0);
    expect(f.push(V38.subarray(11)).forward).toEqual(V38);
  });
});

describe('RfbViewFilter messages', () => {
  const allowed = [pixelFormat(), setEncodings([0, 1, 7, -223, -224]), fbur(0), fbur(1)];
  const hostile = [
    key(1),
    key(0),
    pointer(1),
    pointer(0),
    cutText('rm -rf /\n'),
    cutText(Buffer.alloc(300, 7), true),
    cutText(''),
  ];

  it('forwards SetPixelFormat, SetEncodings and FramebufferUpdateRequest byte for byte', () => {
    const f = new RfbViewFilter();
    feed(f, [handshake38()]);
    const r = feed(f, allowed);
    expect(r.forward).toEqual(Buffer.concat(allowed));
    expect(r.dropped).toBe(0);
  });

  it('drops KeyEvent, PointerEvent and ClientCutText (also extended clipboard) and counts them', () => {
    const f = new RfbViewFilter();
    feed(f, [handshake38()]);
    const r = feed(f, hostile);
    expect(r.forward.length).toBe(0);
    expect(r.dropped).toBe(hostile.length);
  });

  it('gives the same output however the stream is split, for every split size', () => {
    const interleaved = Buffer.concat([
      handshake38(0),
      ...allowed.flatMap((m, i) => [m, hostile[i % hostile.length]!]),
      ...hostile,
      fbur(1),
    ]);
    const expected = Buffer.concat([V38, Buffer.from([1, 1]), ...allowed, fbur(1)]);
    const whole = feed(new RfbViewFilter(), [interleaved]);
    expect(whole.forward).toEqual(expected);
    for (const sizes of [[1], [2], [3], [5, 1], [7], [11, 2, 1], [13], [64]]) {
      const r = feed(new RfbViewFilter(), splits(interleaved, sizes));
      expect(r.forward, `split ${sizes.join(',')}`).toEqual(expected);
      expect(r.dropped).toBe(whole.dropped);
    }
  });

  it('skips a large clipboard across many chunks without buffering it', () => {
    const f = new RfbViewFilter();
    feed(f, [handshake38()]);
    const big = cutText(Buffer.alloc(1_000_000, 0x41));
    const r = feed(f, [...splits(big, [65_536]), fbur()]);
    expect(r.forward).toEqual(fbur());
    expect(r.dropped).toBe(1);
  });

  it('strips pseudo-encodings that would let the server expect viewer input', () => {
    const f = new RfbViewFilter();
    feed(f, [handshake38()]);
    const stripped = [...STRIPPED_ENCODINGS];
    const r = f.push(setEncodings([7, ...stripped, 0, -223]));
    expect(r.forward).toEqual(setEncodings([7, 0, -223]));
  });
});

describe('RfbViewFilter protocol violations', () => {
  const afterHandshake = () => {
    const f = new RfbViewFilter();
    f.push(handshake38());
    return f;
  };

  it.each([
    ['unknown message type 7', Buffer.from([7, 0, 0, 0])],
    ['EnableContinuousUpdates (150)', Buffer.from([150, 1, 0, 0, 0, 0, 0, 0, 0, 0])],
    ['Fence (248)', Buffer.from([248, 0, 0, 0, 0, 0, 0, 0, 0])],
    ['SetDesktopSize (251)', Buffer.from([251, 0, 5, 0, 3, 0, 1, 0])],
    ['QEMU (255)', Buffer.from([255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])],
    ['FileTransfer-like junk', Buffer.from('\x07hello', 'latin1')],
  ])('closes on %s', (_name, bytes) => {
    expect(() => afterHandshake().push(bytes)).toThrow(RfbProtocolViolation);
  });

  it('closes on malformed pixel formats and incremental flags', () => {
    expect(() => afterHandshake().push(pixelFormat(24, 24))).toThrow(/pixel format/);
    expect(() => afterHandshake().push(pixelFormat(16, 24))).toThrow(/pixel format/);
    expect(() => afterHandshake().push(pixelFormat(32, 0))).toThrow(/pixel format/);
    expect(() => afterHandshake().push(fbur(2))).toThrow(/incremental/);
  });

  it('closes on oversized SetEncodings and clipboards before reading their bodies', () => {
    const head = Buffer.from([2, 0, 0, 0]);
    head.writeUInt16BE(MAX_ENCODINGS + 1, 2);
    expect(() => afterHandshake().push(head)).toThrow(/too many encodings/);
    const cut = Buffer.alloc(8);
    cut[0] = 6;
    cut.writeInt32BE(MAX_CUT_TEXT_BYTES + 1, 4);
    expect(() => afterHandshake().push(cut)).toThrow(/clipboard too large/);
    cut.writeInt32BE(-(MAX_CUT_TEXT_BYTES + 1), 4);
    expect(() => afterHandshake().push(cut)).toThrow(/clipboard too large/);
  });

  it('forwards nothing of a chunk that holds a violation, and stays closed afterwards', () => {
    const f = afterHandshake();
    expect(() => f.push(Buffer.concat([fbur(), Buffer.from([9])]))).toThrow(RfbProtocolViolation);
    expect(() => f.push(fbur())).toThrow(RfbProtocolViolation);
  });

  it('a violation split over chunks is caught when its type byte arrives', () => {
    const f = afterHandshake();
    expect(f.push(fbur().subarray(0, 4)).forward.length).toBe(0);
    expect(() => f.push(Buffer.concat([fbur().subarray(4), Buffer.from([200])]))).toThrow(
      RfbProtocolViolation,
    );
  });
});

describe('RfbViewFilter with forwardInput (a handoff control stream)', () => {
  const open = () => {
    const f = new RfbViewFilter({ forwardInput: true });
    f.push(Buffer.concat([V38, Buffer.from([1, 0])]));
    return f;
  };
  const cut = (text: string) => {
    const b = Buffer.alloc(8);
    b[0] = 6;
    b.writeInt32BE(text.length, 4);
    return Buffer.concat([b, Buffer.from(text, 'latin1')]);
  };

  it('forwards keys, pointer and clipboard as sent and counts them as input', () => {
    const f = open();
    const sent = Buffer.concat([fbur(), key(), key(0), cut('paste'), fbur()]);
    const pointer = Buffer.from([5, 1, 0, 10, 0, 20]);
    const a = f.push(sent.subarray(0, 13));
    const b = f.push(Buffer.concat([sent.subarray(13), pointer]));
    expect(Buffer.concat([a.forward, b.forward])).toEqual(Buffer.concat([sent, pointer]));
    expect(a.input + b.input).toBe(4);
    expect(a.dropped + b.dropped).toBe(0);
  });

  it('is view-only after stopInput (its handoff ended): input dropped, pixels still asked for', () => {
    const f = open();
    f.stopInput();
    const r = f.push(Buffer.concat([key(), cut('late'), fbur()]));
    expect(r.forward).toEqual(fbur());
    expect(r).toMatchObject({ input: 0, dropped: 2 });
  });

  it('still refuses what no viewer may send (SetDesktopSize)', () => {
    const f = open();
    expect(() => f.push(Buffer.from([251, 0, 5, 0, 3, 0, 1, 0]))).toThrow(RfbProtocolViolation);
  });
});
