import {
  describeResult,
  type ActionResult,
  type DisplayScreenshot,
  type DisplaySession,
  type PixelInput,
} from './display.js';
import { modifierList, xdotoolCombos } from './keys.js';
import { asInput, intOf, invalidAction, numberOf, pointOf, stringOf } from './tool-error.js';

/**
 * The `computer` tool versions this adapter speaks: `computer_20250124` (Claude 4 models, beta
 * header `computer-use-2025-01-24`) and `computer_20251124` (Claude Opus 4.5 and later, beta
 * header `computer-use-2025-11-24`, which adds `zoom` when the definition sets `enable_zoom`).
 */
export type AnthropicToolVersion = 'computer_20250124' | 'computer_20251124';

export interface AnthropicToolDefinition {
  type: AnthropicToolVersion;
  name: 'computer';
  display_width_px: number;
  display_height_px: number;
  enable_zoom?: boolean;
}

export type AnthropicContent =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: 'image/png'; data: string } };

/**
 * AnthropicToolOutput: `content` and `is_error` go into the `tool_result` block as they are;
 * `action_results` are Cubicle's ActionResults of the input sent (empty for a screenshot), for the
 * caller's own checks — the model reads the same verdict in the text block.
 */
export interface AnthropicToolOutput {
  content: AnthropicContent[];
  is_error: boolean;
  action_results: ActionResult[];
}

/** A hold or wait longer than this is refused: one tool call should not hold the claim's lane. */
const MAX_DURATION_S = 30;
const MAX_TYPE_CHARS = 10_000;

const image = (shot: DisplayScreenshot): AnthropicContent => ({
  type: 'image',
  source: { type: 'base64', media_type: 'image/png', data: shot.data },
});

/**
 * AnthropicComputerTool maps Anthropic `computer` tool calls to Cubicle's pixel input on the
 * whole display. Every action but `screenshot`, `zoom` and `cursor_position` answers with a
 * line saying whether the input was delivered and changed the screen, then a fresh screenshot
 * (unless `screenshotAfterAction` is false), as Anthropic's reference loop does.
 */
export class AnthropicComputerTool {
  constructor(
    private readonly display: DisplaySession,
    readonly definition: AnthropicToolDefinition,
    private readonly screenshotAfterAction = true,
  ) {}

  /** execute runs one `tool_use` block's `input`; a call it cannot map throws `invalid_tool_action`. */
  async execute(rawInput: unknown): Promise<AnthropicToolOutput> {
    const input = asInput(rawInput);
    const action = stringOf(input, 'action');
    const at = () => pointOf(input, 'coordinate');
    const atOrCursor = async () => (input.coordinate === undefined ? this.display.cursor() : at());
    // On a click or a scroll, `text` names modifier keys to hold (on type and key it is the text).
    const mods = () => {
      const list = modifierList(input.text === undefined ? undefined : stringOf(input, 'text'));
      return list ? { modifiers: list } : {};
    };
    switch (action) {
      case 'screenshot':
        return this.#image(await this.display.screenshot());
      case 'zoom': {
        if (!this.definition.enable_zoom)
          throw invalidAction('zoom needs a computer_20251124 tool defined with enable_zoom', {
            action,
          });
        const r = input.region;
        if (!Array.isArray(r) || r.length !== 4)
          throw invalidAction('"region" must be [x0, y0, x1, y1]', { region: r });
        const [x0, y0, x1, y1] = r.map((v, i) => intOf({ [i]: v }, String(i), { min: 0 }));
        return this.#image(await this.display.zoom([x0!, y0!, x1!, y1!]));
      }
      case 'cursor_position': {
        const c = await this.display.cursor();
        return {
          content: [{ type: 'text', text: `X=${c.x},Y=${c.y}` }],
          is_error: false,
          action_results: [],
        };
      }
      case 'wait': {
        const seconds = numberOf(input, 'duration', 1);
        if (seconds > MAX_DURATION_S)
          throw invalidAction(`"duration" is at most ${MAX_DURATION_S} seconds`, {
            duration: seconds,
          });
        await new Promise((r) => setTimeout(r, seconds * 1000));
        return this.#image(await this.display.screenshot());
      }
      case 'left_click':
        return this.#send(action, [{ action: 'click', ...(await atOrCursor()), ...mods() }]);
      case 'right_click':
        return this.#send(action, [
          { action: 'click', button: 'right', ...(await atOrCursor()), ...mods() },
        ]);
      case 'middle_click':
        return this.#send(action, [
          { action: 'click', button: 'middle', ...(await atOrCursor()), ...mods() },
        ]);
      case 'double_click':
        return this.#send(action, [
          { action: 'click', count: 2, ...(await atOrCursor()), ...mods() },
        ]);
      case 'triple_click':
        return this.#send(action, [
          { action: 'click', count: 3, ...(await atOrCursor()), ...mods() },
        ]);
      case 'mouse_move':
        return this.#send(action, [{ action: 'move', ...at() }]);
      case 'left_mouse_down':
        return this.#send(action, [{ action: 'mouse_down', ...(await atOrCursor()) }]);
      case 'left_mouse_up':
        return this.#send(action, [{ action: 'mouse_up', ...(await atOrCursor()) }]);
      case 'left_click_drag': {
        const from = pointOf(input, 'start_coordinate');
        const to = at();
        return this.#send(action, [{ action: 'drag', ...from, to_x: to.x, to_y: to.y }]);
      }
      case 'scroll': {
        const direction = stringOf(input, 'scroll_direction');
        const amount = intOf(input, 'scroll_amount', { min: 1, max: 50 });
        const d = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] }[direction];
        if (!d) throw invalidAction('"scroll_direction" is up, down, left or right', { direction });
        const where = await atOrCursor();
        return this.#send(action, [
          { action: 'scroll', ...where, dx: d[0]! * amount, dy: d[1]! * amount, ...mods() },
        ]);
      }
      case 'type': {
        const text = stringOf(input, 'text');
        const chunks = [];
        for (let i = 0; i < text.length; i += MAX_TYPE_CHARS)
          chunks.push({ action: 'type' as const, text: text.slice(i, i + MAX_TYPE_CHARS) });
        return this.#send(action, chunks);
      }
      case 'key':
        return this.#send(
          action,
          xdotoolCombos(stringOf(input, 'text')).map((keys) => ({ action: 'key' as const, keys })),
        );
      case 'hold_key': {
        const seconds = numberOf(input, 'duration', 1);
        if (seconds > MAX_DURATION_S)
          throw invalidAction(`"duration" is at most ${MAX_DURATION_S} seconds`, {
            duration: seconds,
          });
        const combos = xdotoolCombos(stringOf(input, 'text'));
        if (combos.length !== 1)
          throw invalidAction('hold_key holds one key or combo', { text: input.text });
        return this.#send(action, [
          { action: 'key', keys: combos[0]!, hold_ms: Math.round(seconds * 1000) },
        ]);
      }
      default:
        throw invalidAction(`unknown computer action "${action}"`, { action });
    }
  }

  async #image(shot: DisplayScreenshot): Promise<AnthropicToolOutput> {
    return { content: [image(shot)], is_error: false, action_results: [] };
  }

  /** #send delivers the inputs in order and stops at the first one that was not delivered. */
  async #send(what: string, inputs: PixelInput[]): Promise<AnthropicToolOutput> {
    const results: ActionResult[] = [];
    for (const one of inputs) {
      const result = await this.display.input(one);
      results.push(result);
      if (result.effect === 'refused') break;
    }
    const last = results.at(-1)!;
    const content: AnthropicContent[] = [{ type: 'text', text: describeResult(what, last) }];
    if (this.screenshotAfterAction) content.push(image(await this.display.screenshot()));
    return { content, is_error: last.effect === 'refused', action_results: results };
  }
}
