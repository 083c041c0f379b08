import type { X11Connection } from './x11-connection.js';

// Request encoders and reply decoders for the core requests the driver uses (X11 protocol
// encoding, little-endian). Each packet is opcode, a data byte, length in 4-byte units, body.

const pad4 = (n: number) => (4 - (n % 4)) % 4;

function packet(opcode: number, data: number, bodyBytes: number): Buffer {
  const buf = Buffer.alloc(4 + bodyBytes);
  buf.writeUInt8(opcode, 0);
  buf.writeUInt8(data, 1);
  buf.writeUInt16LE(buf.length / 4, 2);
  return buf;
}

/** internAtom returns the atom for a name, creating it unless `onlyIfExists` (then 0 if none). */
export async function internAtom(
  x: X11Connection,
  name: string,
  onlyIfExists = false,
): Promise<number> {
  const bytes = Buffer.from(name, 'latin1');
  const buf = packet(16, onlyIfExists ? 1 : 0, 4 + bytes.length + pad4(bytes.length));
  buf.writeUInt16LE(bytes.length, 4);
  bytes.copy(buf, 8);
  return (await x.request(buf)).readUInt32LE(8);
}

export interface PropertyValue {
  type: number;
  format: number;
  data: Buffer;
}

/** getProperty reads up to `maxBytes` of a window property; null when it is not set. */
export async function getProperty(
  x: X11Connection,
  window: number,
  property: number,
  maxBytes = 1 << 20,
): Promise<PropertyValue | null> {
  const buf = packet(20, 0, 20);
  buf.writeUInt32LE(window, 4);
  buf.writeUInt32LE(property, 8);
  buf.writeUInt32LE(0, 12); // AnyPropertyType
  buf.writeUInt32LE(0, 16);
  buf.writeUInt32LE(Math.ceil(maxBytes / 4), 20);
  const r = await x.request(buf);
  const type = r.readUInt32LE(8);
  if (type === 0) return null;
  const format = r.readUInt8(1);
  const units = r.readUInt32LE(16);
  const data = r.subarray(32, 32 + units * (format / 8));
  return { type, format, data };
}

/** u32List decodes a format-32 property (window lists, cardinals). */
export function u32List(v: PropertyValue | null): number[] {
  if (!v || v.format !== 32) return [];
  const out: number[] = [];
  for (let i = 0; i + 4 <= v.data.length; i += 4) out.push(v.data.readUInt32LE(i));
  return out;
}

export interface Geometry {
  root: number;
  x: number;
  y: number;
  width: number;
  height: number;
  border: number;
}

export async function getGeometry(x: X11Connection, drawable: number): Promise<Geometry> {
  const buf = packet(14, 0, 4);
  buf.writeUInt32LE(drawable, 4);
  const r = await x.request(buf);
  return {
    root: r.readUInt32LE(8),
    x: r.readInt16LE(12),
    y: r.readInt16LE(14),
    width: r.readUInt16LE(16),
    height: r.readUInt16LE(18),
    border: r.readUInt16LE(20),
  };
}

/** translateCoordinates maps a point of `src` into `dst` coordinates (root: screen position). */
export async function translateCoordinates(
  x: X11Connection,
  src: number,
  dst: number,
  sx = 0,
  sy = 0,
): Promise<{ x: number; y: number; child: number }> {
  const buf = packet(40, 0, 12);
  buf.writeUInt32LE(src, 4);
  buf.writeUInt32LE(dst, 8);
  buf.writeInt16LE(sx, 12);
  buf.writeInt16LE(sy, 14);
  const r = await x.request(buf);
  return { child: r.readUInt32LE(8), x: r.readInt16LE(12), y: r.readInt16LE(14) };
}

/** queryPointer returns where the pointer is on the screen (root-window coordinates). */
export async function queryPointer(x: X11Connection): Promise<{ x: number; y: number }> {
  const buf = packet(38, 0, 4);
  buf.writeUInt32LE(x.setup.root, 4);
  const r = await x.request(buf);
  return { x: r.readInt16LE(16), y: r.readInt16LE(18) };
}

/** queryTree returns a window's parent (used to find the window manager's frame). */
export async function queryTree(
  x: X11Connection,
  window: number,
): Promise<{ root: number; parent: number }> {
  const buf = packet(15, 0, 4);
  buf.writeUInt32LE(window, 4);
  const r = await x.request(buf);
  return { root: r.readUInt32LE(8), parent: r.readUInt32LE(12) };
}

/** getImage reads a ZPixmap rectangle of a drawable: raw pixels at the server's depth/bpp. */
export async function getImage(
  x: X11Connection,
  drawable: number,
  rect: { x: number; y: number; w: number; h: number },
): Promise<Buffer> {
  const buf = packet(73, 2, 16);
  buf.writeUInt32LE(drawable, 4);
  buf.writeInt16LE(rect.x, 8);
  buf.writeInt16LE(rect.y, 10);
  buf.writeUInt16LE(rect.w, 12);
  buf.writeUInt16LE(rect.h, 14);
  buf.writeUInt32LE(0xffffffff, 16);
  const r = await x.request(buf);
  return r.subarray(32);
}

/**
 * sendClientMessage sends a 32-bit ClientMessage to the root window with the masks window
 * managers listen on (SubstructureRedirect|SubstructureNotify), as EWMH requests are sent.
 */
export async function sendRootClientMessage(
  x: X11Connection,
  window: number,
  messageType: number,
  data: number[],
): Promise<void> {
  const buf = packet(25, 0, 40);
  buf.writeUInt32LE(x.setup.root, 4);
  buf.writeUInt32LE(0x00180000, 8);
  buf.writeUInt8(33, 12); // ClientMessage
  buf.writeUInt8(32, 13); // format
  buf.writeUInt32LE(window, 16);
  buf.writeUInt32LE(messageType, 20);
  data.slice(0, 5).forEach((v, i) => buf.writeUInt32LE(v >>> 0, 24 + i * 4));
  // A void request settles only when a later reply arrives: sync supplies one.
  await Promise.all([x.requestVoid(buf), x.sync()]);
}

/** queryExtension returns an extension's major opcode, or null when the server lacks it. */
export async function queryExtension(x: X11Connection, name: string): Promise<number | null> {
  const bytes = Buffer.from(name, 'latin1');
  const buf = packet(98, 0, 4 + bytes.length + pad4(bytes.length));
  buf.writeUInt16LE(bytes.length, 4);
  bytes.copy(buf, 8);
  const r = await x.request(buf);
  return r.readUInt8(8) === 1 ? r.readUInt8(9) : null;
}

export const XTEST_KEY_PRESS = 2;
export const XTEST_KEY_RELEASE = 3;
export const XTEST_BUTTON_PRESS = 4;
export const XTEST_BUTTON_RELEASE = 5;
export const XTEST_MOTION = 6;

/**
 * fakeInput is XTEST FakeInput: the server treats the event as coming from a real device. The
 * promise settles only after a later reply (send a sync() after the last event, don't await first).
 */
export function fakeInput(
  x: X11Connection,
  xtestOpcode: number,
  type: number,
  detail: number,
  at?: { x: number; y: number },
): Promise<void> {
  const buf = Buffer.alloc(36);
  buf.writeUInt8(xtestOpcode, 0);
  buf.writeUInt8(2, 1);
  buf.writeUInt16LE(9, 2);
  buf.writeUInt8(type, 4);
  buf.writeUInt8(detail, 5);
  buf.writeUInt32LE(0, 8); // CurrentTime
  buf.writeUInt32LE(at ? x.setup.root : 0, 12);
  buf.writeInt16LE(at?.x ?? 0, 24);
  buf.writeInt16LE(at?.y ?? 0, 26);
  return x.requestVoid(buf);
}

/** KeyboardMapping is the server's keycode → keysyms table (`per` keysyms for each keycode). */
export interface KeyboardMapping {
  minKeycode: number;
  per: number;
  keysyms: number[][];
}

export async function getKeyboardMapping(x: X11Connection): Promise<KeyboardMapping> {
  const { minKeycode, maxKeycode } = x.setup;
  const buf = packet(101, 0, 4);
  buf.writeUInt8(minKeycode, 4);
  buf.writeUInt8(maxKeycode - minKeycode + 1, 5);
  const r = await x.request(buf);
  const per = r.readUInt8(1);
  const keysyms: number[][] = [];
  for (let k = 0; k <= maxKeycode - minKeycode; k += 1) {
    const row: number[] = [];
    for (let i = 0; i < per; i += 1) row.push(r.readUInt32LE(32 + (k * per + i) * 4));
    keysyms.push(row);
  }
  return { minKeycode, per, keysyms };
}

/** changeKeyboardMapping sets the keysyms of one keycode (void: follow with sync). */
export function changeKeyboardMapping(
  x: X11Connection,
  keycode: number,
  keysyms: number[],
): Promise<void> {
  const buf = packet(100, 1, 4 + keysyms.length * 4);
  buf.writeUInt8(keycode, 4);
  buf.writeUInt8(keysyms.length, 5);
  keysyms.forEach((k, i) => buf.writeUInt32LE(k >>> 0, 8 + i * 4));
  return x.requestVoid(buf);
}
