import { describe, expect, it } from 'vitest';
import { ObserveRequest, ObserveResponse } from './observe.js';
import { ScreenshotImage, ScreenshotRequest } from './screenshot.js';

const screenshot = {
  screenshot_id: 'p7',
  window_id: 0x400003,
  format: 'png',
  data: 'iVBORw0KGgo=',
  width: 430,
  height: 294,
  scale: 1,
  origin: { x: 100, y: 50 },
};

const response = {
  snapshot_id: 's2b',
  invalidated_snapshot_ids: ['s2a'],
  window: { window_id: 0x400003, title: 'Test app', pid: 4242, app: 'python3' },
  elements: [
    {
      element_token: 's2b:0',
      role: 'push_button',
      name: 'OK',
      states: ['enabled', 'sensitive', 'focusable', 'showing', 'visible'],
      actions: ['click', 'focus'],
      depth: 2,
    },
  ],
  truncated: false,
  degraded: false,
  screenshot,
  duration_ms: 18,
};

describe('ObserveRequest', () => {
  it('fills defaults: 500 elements, lean (hidden subtrees summarised), screenshot on, long edge 1568', () => {
    expect(ObserveRequest.parse({ window_id: 7 })).toEqual({
      window_id: 7,
      max_elements: 500,
      max_depth: 64,
      include_hidden: false,
      include_screenshot: true,
      max_dimension: 1568,
    });
  });

  it('rejects a missing window, a zero budget and unknown fields', () => {
    expect(ObserveRequest.safeParse({}).success).toBe(false);
    expect(ObserveRequest.safeParse({ window_id: 7, max_elements: 0 }).success).toBe(false);
    expect(ObserveRequest.safeParse({ window_id: 7, pid: 1 }).success).toBe(false);
  });
});

describe('ObserveResponse', () => {
  it('accepts a complete snapshot', () => {
    expect(ObserveResponse.safeParse(response).error).toBeUndefined();
  });

  it('says why it is truncated or degraded, never just that it is', () => {
    const truncated = {
      ...response,
      truncated: { reasons: ['max_elements'], omitted_count: 1500 },
    };
    expect(ObserveResponse.safeParse(truncated).success).toBe(true);
    expect(ObserveResponse.safeParse({ ...response, truncated: true }).success).toBe(false);
    expect(ObserveResponse.safeParse({ ...response, truncated: { reasons: [] } }).success).toBe(
      false,
    );
    const degraded = { ...response, degraded: { reasons: ['app_not_accessible'] }, elements: [] };
    expect(ObserveResponse.safeParse(degraded).success).toBe(true);
    expect(
      ObserveResponse.safeParse({ ...response, degraded: { reasons: ['unknown'] } }).success,
    ).toBe(false);
  });

  it('a diff carries added and changed rows and removed tokens; elements stay empty', () => {
    const diff = {
      ...response,
      elements: [],
      diff: {
        since: 's2a',
        added: response.elements,
        changed: [],
        removed: ['s2a:4'],
        unchanged_count: 12,
      },
    };
    expect(ObserveResponse.safeParse(diff).error).toBeUndefined();
    const bad = { ...diff, diff: { ...diff.diff, removed: ['not a token'] } };
    expect(ObserveResponse.safeParse(bad).success).toBe(false);
    expect(ObserveRequest.parse({ window_id: 7, since: 's2a' }).since).toBe('s2a');
    expect(ObserveRequest.safeParse({ window_id: 7, since: 's2a:1' }).success).toBe(false);
  });

  it('rejects a secure row that leaks its value', () => {
    const leaking = {
      ...response.elements[0],
      role: 'password_text',
      redacted: true,
      value: 'hunter2',
    };
    expect(ObserveResponse.safeParse({ ...response, elements: [leaking] }).success).toBe(false);
  });
});

describe('screenshot', () => {
  it('defaults to PNG at 1568 px and allows quality only for JPEG', () => {
    expect(ScreenshotRequest.parse({})).toEqual({ format: 'png', max_dimension: 1568 });
    expect(ScreenshotRequest.parse({ format: 'jpeg', window_id: 9 })).toEqual({
      format: 'jpeg',
      window_id: 9,
      quality: 80,
      max_dimension: 1568,
    });
    expect(ScreenshotRequest.safeParse({ format: 'png', quality: 50 }).success).toBe(false);
    expect(ScreenshotRequest.safeParse({ format: 'webp' }).success).toBe(false);
    expect(ScreenshotRequest.safeParse({ max_dimension: 10 }).success).toBe(false);
  });

  it('describes how to map pixels back to the screen', () => {
    expect(ScreenshotImage.safeParse(screenshot).success).toBe(true);
    expect(ScreenshotImage.safeParse({ ...screenshot, scale: 0 }).success).toBe(false);
    expect(ScreenshotImage.safeParse({ ...screenshot, data: 'not base64!' }).success).toBe(false);
    expect(ScreenshotImage.safeParse({ ...screenshot, window_id: null }).success).toBe(true);
  });
});
