import type { BodyOf, ResponseOf } from '../operations.js';
import { invalidAction } from './tool-error.js';

export type ActionResult = ResponseOf<'inputClaim'>;
export type DisplayScreenshot = ResponseOf<'screenshotClaim'>;
type InputBody = BodyOf<'inputClaim'>;
/** PixelInput is a pixel action without the screenshot it is measured in (the session adds it). */
export type PixelInput = InputBody extends infer B
  ? B extends unknown
    ? Omit<B, 'screenshot_id' | 'window_id' | 'delivery_mode'>
    : never
  : never;

/** The two claim calls a tool drives the desktop with (ClaimHandle has them). */
export interface DriveCalls {
  input(body: InputBody): Promise<ActionResult>;
  screenshotImage(body: BodyOf<'screenshotClaim'>): Promise<DisplayScreenshot>;
}

/** DEFAULT_MAX_DIMENSION: a 1280×800 desktop at full size, which both vendors accept as is. */
export const DEFAULT_MAX_DIMENSION = 1280;

/**
 * DisplaySession is a computer-use tool's view of the desktop: whole-display PNG screenshots at
 * one size (the `display_width/height` the model is told), and pixel input measured in the
 * latest of them. Cubicle maps the model's pixels to the screen (screen = pixel / scale), so
 * coordinates stay right when the screenshot is downscaled.
 */
export class DisplaySession {
  #latest: DisplayScreenshot | null = null;

  constructor(
    private readonly claim: DriveCalls,
    readonly maxDimension: number = DEFAULT_MAX_DIMENSION,
  ) {}

  /** screenshot captures the display; pixel input is measured in it from now on. */
  async screenshot(): Promise<DisplayScreenshot> {
    const body = { format: 'png', max_dimension: this.maxDimension } as BodyOf<'screenshotClaim'>;
    return (this.#latest = await this.claim.screenshotImage(body));
  }

  /** size is the model's display size: the screenshot's, after any downscale. */
  async size(): Promise<{ width: number; height: number }> {
    const shot = this.#latest ?? (await this.screenshot());
    return { width: shot.width, height: shot.height };
  }

  /**
   * input sends one pixel action measured in the latest display screenshot (taking one first if
   * there is none). When another client took a display screenshot since, the guest refuses it
   * (`stale_screenshot`, nothing delivered); then a new screenshot of the same size is taken and
   * the action sent once more: the model's coordinates mean the same screen points in it.
   */
  async input(action: PixelInput): Promise<ActionResult> {
    const send = async (shot: DisplayScreenshot) =>
      this.claim.input({ ...action, screenshot_id: shot.screenshot_id } as InputBody);
    const first = await send(this.#latest ?? (await this.screenshot()));
    if (first.effect !== 'refused' || first.error.code !== 'stale_screenshot') return first;
    return send(await this.screenshot());
  }

  /** cursor is where the pointer is, in the model's pixels (a fresh screenshot says). */
  async cursor(): Promise<{ x: number; y: number }> {
    const shot = await this.screenshot();
    if (!shot.cursor) throw invalidAction('the pointer is not on the display');
    return shot.cursor;
  }

  /**
   * zoom captures a region given in the model's pixels ([x0, y0, x1, y1]) at up to the screen's
   * own resolution (its long edge at most `maxDimension`). It does not change the latest
   * screenshot, so the model's coordinates keep their meaning.
   */
  async zoom(region: [number, number, number, number]): Promise<DisplayScreenshot> {
    const scale = (this.#latest ?? (await this.screenshot())).scale;
    const [x0, y0, x1, y1] = region;
    if (x1 <= x0 || y1 <= y0)
      throw invalidAction('region must be [x0, y0, x1, y1] with x0 < x1 and y0 < y1', { region });
    const screen = {
      x: Math.floor(x0 / scale),
      y: Math.floor(y0 / scale),
      w: Math.max(1, Math.round((x1 - x0) / scale)),
      h: Math.max(1, Math.round((y1 - y0) / scale)),
    };
    const body = { format: 'png', max_dimension: this.maxDimension, region: screen };
    return this.claim.screenshotImage(body as BodyOf<'screenshotClaim'>);
  }
}

/** describeResult is one line a model can read: what Cubicle could say about the action. */
export function describeResult(what: string, result: ActionResult): string {
  switch (result.effect) {
    case 'confirmed':
      return `${what}: delivered, and the screen changed (effect: confirmed).`;
    case 'unverifiable':
      return `${what}: delivered; no visible change was seen (effect: unverifiable).`;
    case 'suspected_noop':
      return `${what}: delivered, but nothing seems to have changed (effect: suspected_noop).`;
    case 'partial':
      return `${what}: only ${result.delivery.delivered_count} of ${result.delivery.requested_count} went through (effect: partial).`;
    case 'refused':
      return `${what}: not delivered, ${result.error.code}: ${result.error.hint}`;
    default:
      return result satisfies never;
  }
}
