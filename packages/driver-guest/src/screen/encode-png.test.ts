import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { encodePng, encodeXImagePng } from './encode-png.js';
import { toRgb, type XImage } from './grab-screen.js';

describe('encodePng', () => {
  it('round-trips pixels through an independent decoder', () => {
    const width = 37;
    const height = 11;
    const rgb = Buffer.alloc(width * height * 3);
    for (let i = 0; i < rgb.length; i += 1) rgb[i] = (i * 7919) % 251;
    const decoded = PNG.sync.read(encodePng(rgb, width, height));
    expect([decoded.width, decoded.height]).toEqual([width, height]);
    for (let p = 0; p < width * height; p += 1)
      expect([...decoded.data.subarray(p * 4, p * 4 + 3)]).toEqual([
        ...rgb.subarray(p * 3, p * 3 + 3),
      ]);
  });

  it('rejects a buffer of the wrong size', () => {
    expect(() => encodePng(Buffer.alloc(10), 2, 2)).toThrow(/does not match/);
  });

  it('encodes the server’s BGRX pixels to the same PNG as the RGB path', () => {
    const width = 29;
    const height = 7;
    const raw = Buffer.alloc(width * height * 4);
    for (let i = 0; i < raw.length; i += 1) raw[i] = (i * 104729) % 253;
    const img: XImage = {
      width,
      height,
      raw,
      redMask: 0xff0000,
      greenMask: 0xff00,
      blueMask: 0xff,
    };
    const rgb = toRgb(img);
    expect(encodeXImagePng(img).equals(encodePng(rgb.data, width, height))).toBe(true);
    // The same from a view at an odd offset (a reply sliced out of the socket's buffer).
    const odd = Buffer.alloc(raw.length + 1).subarray(1);
    raw.copy(odd);
    expect(encodeXImagePng({ ...img, raw: odd }).equals(encodePng(rgb.data, width, height))).toBe(
      true,
    );
    const decoded = PNG.sync.read(encodeXImagePng(img));
    for (let p = 0; p < width * height; p += 1)
      expect([...decoded.data.subarray(p * 4, p * 4 + 3)]).toEqual([
        raw[p * 4 + 2],
        raw[p * 4 + 1],
        raw[p * 4],
      ]);
  });

  it('decodes other channel layouts through the general path', () => {
    const raw = Buffer.from([0x11, 0x22, 0x33, 0, 0x44, 0x55, 0x66, 0]);
    const img: XImage = {
      width: 2,
      height: 1,
      raw,
      redMask: 0xff,
      greenMask: 0xff00,
      blueMask: 0xff0000,
    };
    const decoded = PNG.sync.read(encodeXImagePng(img));
    expect([...decoded.data.subarray(0, 3)]).toEqual([0x11, 0x22, 0x33]);
    expect([...decoded.data.subarray(4, 7)]).toEqual([0x44, 0x55, 0x66]);
  });
});
