import { AnthropicComputerTool, type AnthropicToolVersion } from './anthropic.js';
import { DEFAULT_MAX_DIMENSION, DisplaySession, type DriveCalls } from './display.js';
import { OpenAIComputerTool } from './openai.js';
import { invalidAction } from './tool-error.js';

export type ComputerToolKind = 'anthropic' | 'openai';

export interface ComputerToolOptions {
  /**
   * Long edge of the screenshots the model sees, and so of its coordinate space (default 1280:
   * a 1280×800 desktop at full size). Smaller values downscale; Cubicle maps the model's pixels
   * back to the screen.
   */
  maxDimension?: number;
  /** Anthropic only: the tool version (default `computer_20250124`). */
  version?: AnthropicToolVersion;
  /** Anthropic only: answer input actions with a screenshot after them (default true). */
  screenshotAfterAction?: boolean;
}

/**
 * createComputerTool takes one screenshot of the claim's display to learn its size (the
 * definition's display width and height), then returns the tool for that vendor.
 */
export async function createComputerTool(
  claim: DriveCalls,
  kind: 'anthropic',
  options?: ComputerToolOptions,
): Promise<AnthropicComputerTool>;
export async function createComputerTool(
  claim: DriveCalls,
  kind: 'openai',
  options?: ComputerToolOptions,
): Promise<OpenAIComputerTool>;
export async function createComputerTool(
  claim: DriveCalls,
  kind: ComputerToolKind,
  options: ComputerToolOptions = {},
): Promise<AnthropicComputerTool | OpenAIComputerTool> {
  const display = new DisplaySession(claim, options.maxDimension ?? DEFAULT_MAX_DIMENSION);
  const { width, height } = await display.size();
  switch (kind) {
    case 'anthropic': {
      const version = options.version ?? 'computer_20250124';
      const definition = {
        type: version,
        name: 'computer' as const,
        display_width_px: width,
        display_height_px: height,
        ...(version === 'computer_20251124' ? { enable_zoom: true } : {}),
      };
      return new AnthropicComputerTool(display, definition, options.screenshotAfterAction ?? true);
    }
    case 'openai':
      return new OpenAIComputerTool(display, {
        type: 'computer_use_preview',
        display_width: width,
        display_height: height,
        environment: 'linux',
      });
    default:
      throw invalidAction(`unknown tool kind "${kind as string}" (anthropic or openai)`);
  }
}

export { AnthropicComputerTool, OpenAIComputerTool, DisplaySession };
export type {
  AnthropicContent,
  AnthropicToolDefinition,
  AnthropicToolOutput,
  AnthropicToolVersion,
} from './anthropic.js';
export type {
  OpenAIComputerCall,
  OpenAIScreenshotOutput,
  OpenAIToolDefinition,
  OpenAIToolOutput,
} from './openai.js';
export type { ActionResult, DisplayScreenshot } from './display.js';
