import { describe, expect, it } from 'vitest';
import { ElementActionRequest, TYPE_TEXT_MAX_CHARS } from './element-action.js';
import { PixelActionRequest } from './pixel-action.js';

const element = { window_id: 7, element_token: 's2b:14' };
const pixel = { window_id: 7, screenshot_id: 'p3' };

describe('ElementActionRequest', () => {
  it('accepts every action and leaves an omitted delivery mode to the driver', () => {
    const requests: Record<string, unknown>[] = [
      { ...element, action: 'click' },
      { ...element, action: 'set_value', value: '' },
      { ...element, action: 'type_text', text: 'héllo ✓' },
      { ...element, action: 'focus' },
      { ...element, action: 'toggle' },
      { ...element, action: 'toggle', checked: true },
      { ...element, action: 'select' },
      { ...element, action: 'scroll_into_view', delivery_mode: 'foreground' },
    ];
    for (const request of requests) {
      const parsed = ElementActionRequest.parse(request);
      expect(parsed.delivery_mode).toBe(request.delivery_mode);
    }
  });

  it('rejects malformed tokens, missing or misplaced parameters and unknown actions', () => {
    expect(
      ElementActionRequest.safeParse({ ...element, element_token: '@e4', action: 'click' }).success,
    ).toBe(false);
    expect(ElementActionRequest.safeParse({ ...element, action: 'set_value' }).success).toBe(false);
    expect(
      ElementActionRequest.safeParse({ ...element, action: 'click', value: 'x' }).success,
    ).toBe(false);
    expect(
      ElementActionRequest.safeParse({ ...element, action: 'type_text', text: '' }).success,
    ).toBe(false);
    expect(
      ElementActionRequest.safeParse({
        ...element,
        action: 'type_text',
        text: 'x'.repeat(TYPE_TEXT_MAX_CHARS + 1),
      }).success,
    ).toBe(false);
    expect(ElementActionRequest.safeParse({ ...element, action: 'hover' }).success).toBe(false);
    expect(
      ElementActionRequest.safeParse({ ...element, action: 'click', delivery_mode: 'auto' })
        .success,
    ).toBe(false);
    expect(
      ElementActionRequest.safeParse({ element_token: 's2b:14', action: 'click' }).success,
    ).toBe(false);
  });
});

describe('PixelActionRequest', () => {
  it('defaults to foreground delivery, the route every backend has for pixel input', () => {
    const click = PixelActionRequest.parse({ ...pixel, action: 'click', x: 1, y: 2 });
    expect(click.delivery_mode).toBe('foreground');
    const typed = PixelActionRequest.parse({ ...pixel, action: 'type', text: 'a' });
    expect(typed.delivery_mode).toBe('foreground');
    const asked = { ...pixel, action: 'key', keys: 'Return', delivery_mode: 'background' };
    expect(PixelActionRequest.parse(asked).delivery_mode).toBe('background');
  });

  it('accepts every action at screenshot pixels', () => {
    const requests = [
      { ...pixel, action: 'click', x: 10, y: 20 },
      { ...pixel, action: 'click', x: 10, y: 20, modifiers: ['ctrl'] },
      { ...pixel, action: 'double_click', x: 10, y: 20 },
      { ...pixel, action: 'right_click', x: 10, y: 20 },
      { ...pixel, action: 'move', x: 0, y: 0 },
      { ...pixel, action: 'drag', x: 10, y: 20, to_x: 200, to_y: 20 },
      { ...pixel, action: 'scroll', x: 10, y: 20, dy: 3 },
      { ...pixel, action: 'type', text: '日本語 ✓ é' },
      { ...pixel, action: 'type', text: 'abc', focus_at: { x: 5, y: 5 } },
      { ...pixel, action: 'key', keys: 'Return' },
      { ...pixel, action: 'key', keys: 'ctrl+shift+Tab', repeat: 2 },
    ];
    for (const request of requests)
      expect(PixelActionRequest.safeParse(request).error).toBeUndefined();
  });

  it('requires the screenshot the pixels were measured in', () => {
    expect(
      PixelActionRequest.safeParse({ window_id: 7, action: 'click', x: 1, y: 1 }).success,
    ).toBe(false);
    expect(
      PixelActionRequest.safeParse({ ...pixel, screenshot_id: 's2b', action: 'click', x: 1, y: 1 })
        .success,
    ).toBe(false);
  });

  it('rejects negative or fractional pixels, bad key combos and empty scrolls', () => {
    expect(PixelActionRequest.safeParse({ ...pixel, action: 'click', x: -1, y: 1 }).success).toBe(
      false,
    );
    expect(PixelActionRequest.safeParse({ ...pixel, action: 'click', x: 1.5, y: 1 }).success).toBe(
      false,
    );
    expect(PixelActionRequest.safeParse({ ...pixel, action: 'key', keys: 'ctrl+' }).success).toBe(
      false,
    );
    expect(PixelActionRequest.safeParse({ ...pixel, action: 'key', keys: 'hyper+a' }).success).toBe(
      false,
    );
    expect(PixelActionRequest.safeParse({ ...pixel, action: 'scroll', x: 1, y: 1 }).success).toBe(
      false,
    );
    expect(
      PixelActionRequest.safeParse({ ...pixel, action: 'move', x: 1, y: 1, modifiers: ['ctrl'] })
        .success,
    ).toBe(false);
  });
});
