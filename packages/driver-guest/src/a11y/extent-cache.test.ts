import { describe, expect, it } from 'vitest';
import { ExtentCache } from './extent-cache.js';

describe('ExtentCache', () => {
  it('drops a subtree only when its allocation really changes', () => {
    const cache = new ExtentCache();
    cache.set('/box', { x: 0, y: 10, w: 100, h: 20 });
    cache.set('/child', { x: 5, y: 10, w: 50, h: 20 });
    const subtree = () => ['/box', '/child'];
    expect(cache.onBounds('/box', [0, 10, 100, 20], subtree)).toBe(true); // first sighting
    cache.set('/box', { x: 0, y: 10, w: 100, h: 20 });
    cache.set('/child', { x: 5, y: 10, w: 50, h: 20 });
    expect(cache.onBounds('/box', [0, 10, 100, 20], subtree)).toBe(false); // re-announced, same
    expect(cache.get('/child')).toBeDefined();
    expect(cache.onBounds('/box', [0, 44, 100, 20], subtree)).toBe(true);
    expect(cache.get('/box')).toBeUndefined();
    expect(cache.get('/child')).toBeUndefined();
  });
});
