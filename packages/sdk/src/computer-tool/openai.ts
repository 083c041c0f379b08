import type { ActionResult, DisplaySession, PixelInput } from './display.js';
import { toCombos } from './keys.js';
import { asInput, intOf, invalidAction, numberOf, stringOf } from './tool-error.js';

/**
 * OpenAIToolDefinition is the Responses API's computer-use tool (`computer_use_preview`, with
 * the display size the screenshots have and the `linux` environment).
 */
export interface OpenAIToolDefinition {
  type: 'computer_use_preview';
  display_width: number;
  display_height: number;
  environment: 'linux';
}

/** The `output` of a `computer_call_output` item: the screen after the action. */
export interface OpenAIScreenshotOutput {
  type: 'computer_screenshot';
  image_url: string;
}

/**
 * OpenAIToolOutput: `output` goes into the `computer_call_output` item; that item has no field
 * for anything else, so Cubicle's ActionResults (was the input delivered, did the screen change)
 * come beside it in `action_results`, for the caller's loop to check.
 */
export interface OpenAIToolOutput {
  output: OpenAIScreenshotOutput;
  action_results: ActionResult[];
}

/** A computer_call as the Responses API returns it: one `action`, or a batch of `actions`. */
export interface OpenAIComputerCall {
  call_id: string;
  action?: unknown;
  actions?: unknown[];
}

/**
 * One wheel notch per this many pixels of `scroll_x` / `scroll_y`: OpenAI's amounts are pixels,
 * a notch scrolls roughly 50-100 px in GTK and Chromium. At least one notch is always sent.
 */
export const SCROLL_PIXELS_PER_NOTCH = 100;
const BUTTONS = {
  left: 'left',
  right: 'right',
  wheel: 'middle',
  back: 'back',
  forward: 'forward',
} as const;
const DEFAULT_WAIT_MS = 1000;
const MAX_WAIT_MS = 30_000;

const notches = (pixels: number) =>
  pixels === 0
    ? 0
    : Math.sign(pixels) *
      Math.min(50, Math.max(1, Math.round(Math.abs(pixels) / SCROLL_PIXELS_PER_NOTCH)));

/**
 * OpenAIComputerTool maps OpenAI computer-use actions to Cubicle's pixel input on the whole
 * display. Each call answers with a screenshot taken after the action, which is what the model
 * expects next; the ActionResults say whether each input was delivered and changed the screen.
 */
export class OpenAIComputerTool {
  constructor(
    private readonly display: DisplaySession,
    readonly definition: OpenAIToolDefinition,
  ) {}

  /** execute runs one action (`computer_call.action`); a call it cannot map throws `invalid_tool_action`. */
  async execute(rawAction: unknown): Promise<OpenAIToolOutput> {
    const results = await this.#run(rawAction);
    return { output: await this.#screenshot(), action_results: results };
  }

  /**
   * executeCall runs a whole `computer_call` (its `action`, or each of its `actions` in order,
   * stopping at one that was not delivered) and returns the `computer_call_output` item to send
   * back. Pending safety checks are the caller's to acknowledge: none is acknowledged here.
   */
  async executeCall(call: OpenAIComputerCall): Promise<{
    item: { type: 'computer_call_output'; call_id: string; output: OpenAIScreenshotOutput };
    action_results: ActionResult[];
  }> {
    const actions = call.actions ?? (call.action === undefined ? [] : [call.action]);
    if (actions.length === 0)
      throw invalidAction('the computer_call has no action', { call_id: call.call_id });
    const results: ActionResult[] = [];
    for (const action of actions) {
      const done = await this.#run(action);
      results.push(...done);
      if (done.some((r) => r.effect === 'refused')) break;
    }
    const output = await this.#screenshot();
    return {
      item: { type: 'computer_call_output', call_id: call.call_id, output },
      action_results: results,
    };
  }

  async #screenshot(): Promise<OpenAIScreenshotOutput> {
    const shot = await this.display.screenshot();
    return { type: 'computer_screenshot', image_url: `data:image/png;base64,${shot.data}` };
  }

  async #run(raw: unknown): Promise<ActionResult[]> {
    const a = asInput(raw);
    const type = stringOf(a, 'type');
    const at = () => ({ x: intOf(a, 'x', { min: 0 }), y: intOf(a, 'y', { min: 0 }) });
    switch (type) {
      case 'screenshot':
        return [];
      case 'wait': {
        const ms = numberOf(a, 'duration', DEFAULT_WAIT_MS);
        if (ms > MAX_WAIT_MS)
          throw invalidAction(`"duration" is at most ${MAX_WAIT_MS} ms`, { duration: ms });
        await new Promise((r) => setTimeout(r, ms));
        return [];
      }
      case 'click': {
        const name = a.button === undefined ? 'left' : stringOf(a, 'button');
        const button = BUTTONS[name as keyof typeof BUTTONS];
        if (!button)
          throw invalidAction('"button" is left, right, wheel, back or forward', { button: name });
        return this.#send([{ action: 'click', button, ...at() }]);
      }
      case 'double_click':
        return this.#send([{ action: 'click', count: 2, ...at() }]);
      case 'move':
        return this.#send([{ action: 'move', ...at() }]);
      case 'scroll': {
        const dx = notches(intOf(a, 'scroll_x'));
        const dy = notches(intOf(a, 'scroll_y'));
        if (dx === 0 && dy === 0) return [];
        return this.#send([{ action: 'scroll', ...at(), dx, dy }]);
      }
      case 'type': {
        const text = stringOf(a, 'text');
        const chunks: PixelInput[] = [];
        for (let i = 0; i < text.length; i += 10_000)
          chunks.push({ action: 'type', text: text.slice(i, i + 10_000) });
        return this.#send(chunks);
      }
      case 'keypress': {
        const keys = a.keys;
        if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string'))
          throw invalidAction('"keys" must be an array of key names', { keys });
        return this.#send(toCombos(keys, true).map((combo) => ({ action: 'key', keys: combo })));
      }
      case 'drag': {
        const path = a.path;
        if (!Array.isArray(path) || path.length < 2)
          throw invalidAction('"path" must list at least two points', { path });
        const points = path.map((p) => {
          const q = asInput(p);
          return { x: intOf(q, 'x', { min: 0 }), y: intOf(q, 'y', { min: 0 }) };
        });
        if (points.length === 2) {
          const [from, to] = points as [{ x: number; y: number }, { x: number; y: number }];
          return this.#send([{ action: 'drag', ...from, to_x: to.x, to_y: to.y }]);
        }
        // A longer path is pressed at its first point, moved through the others, released last.
        return this.#send([
          { action: 'mouse_down', ...points[0]! },
          ...points.slice(1, -1).map((p) => ({ action: 'move' as const, ...p })),
          { action: 'mouse_up', ...points.at(-1)! },
        ]);
      }
      default:
        throw invalidAction(`unknown computer action "${type}"`, { type });
    }
  }

  /** #send delivers the inputs in order and stops at the first one that was not delivered. */
  async #send(inputs: PixelInput[]): Promise<ActionResult[]> {
    const results: ActionResult[] = [];
    for (const one of inputs) {
      const result = await this.display.input(one);
      results.push(result);
      if (result.effect === 'refused') break;
    }
    return results;
  }
}
