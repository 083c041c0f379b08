/** RgbImage is 8-bit RGB pixels, row after row without padding. */
export interface RgbImage {
  width: number;
  height: number;
  data: Buffer;
}

/**
 * fitScale is the factor that brings the long edge down to `maxDimension` (1 when it fits
 * already: screenshots are never upscaled, so a pixel never stands for less than a screen pixel).
 */
export function fitScale(width: number, height: number, maxDimension: number): number {
  const long = Math.max(width, height);
  return long <= maxDimension ? 1 : maxDimension / long;
}

/**
 * downscale shrinks an image by `scale` (0 < scale <= 1) with area averaging, so thin text and
 * one-pixel borders fade instead of vanishing as they would with nearest-neighbour sampling.
 */
export function downscale(src: RgbImage, scale: number): RgbImage {
  if (scale >= 1) return src;
  const width = Math.max(1, Math.round(src.width * scale));
  const height = Math.max(1, Math.round(src.height * scale));
  const data = Buffer.alloc(width * height * 3);
  const xs = new Int32Array(width + 1);
  for (let x = 0; x <= width; x += 1)
    xs[x] = Math.min(src.width, Math.round((x * src.width) / width));
  for (let y = 0; y < height; y += 1) {
    const y0 = Math.round((y * src.height) / height);
    const y1 = Math.max(y0 + 1, Math.min(src.height, Math.round(((y + 1) * src.height) / height)));
    for (let x = 0; x < width; x += 1) {
      const x0 = xs[x]!;
      const x1 = Math.max(x0 + 1, xs[x + 1]!);
      let r = 0;
      let g = 0;
      let b = 0;
      for (let sy = y0; sy < y1; sy += 1) {
        let i = (sy * src.width + x0) * 3;
        for (let sx = x0; sx < x1; sx += 1, i += 3) {
          r += src.data[i]!;
          g += src.data[i + 1]!;
          b += src.data[i + 2]!;
        }
      }
      const n = (y1 - y0) * (x1 - x0);
      const o = (y * width + x) * 3;
      data[o] = Math.round(r / n);
      data[o + 1] = Math.round(g / n);
      data[o + 2] = Math.round(b / n);
    }
  }
  return { width, height, data };
}
