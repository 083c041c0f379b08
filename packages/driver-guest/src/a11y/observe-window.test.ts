import { describe, expect, it } from 'vitest';
import { isEchoedText } from './observe-window.js';
import type { NodeData } from './read-node.js';

const node = (role: string, name: string, children: string[] = []): NodeData => ({
  path: `/${role}/${name}`,
  parent: null,
  children,
  role,
  name,
  description: '',
  states: [],
  ifaces: new Set(),
});

describe('isEchoedText', () => {
  it("leaves out a text leaf that only repeats its parent's name", () => {
    expect(isEchoedText(node('static', 'Row 5'), node('table_cell', 'Row 5'))).toBe(true);
  });
  it('keeps text with its own words, text with children, and other roles', () => {
    expect(isEchoedText(node('static', 'nothing deleted'), node('paragraph', ''))).toBe(false);
    expect(isEchoedText(node('static', 'Row 5', ['/x']), node('table_cell', 'Row 5'))).toBe(false);
    expect(isEchoedText(node('static', ''), node('table_cell', ''))).toBe(false);
    expect(isEchoedText(node('push_button', 'Delete'), node('table_cell', 'Delete'))).toBe(false);
  });
});
