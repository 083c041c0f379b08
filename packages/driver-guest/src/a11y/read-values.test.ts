import { describe, expect, it } from 'vitest';
import { IFACE } from './atspi-constants.js';
import type { NodeData } from './read-node.js';
import { hasValue } from './read-values.js';

const node = (role: string, ...ifaces: string[]): NodeData => ({
  path: '/x',
  parent: null,
  children: [],
  role,
  name: 'x',
  description: '',
  states: [],
  ifaces: new Set(ifaces),
});

describe('hasValue', () => {
  it('reads text fields, documents, terminals and numeric controls', () => {
    expect(hasValue(node('text', IFACE.editableText))).toBe(true);
    expect(hasValue(node('paragraph', IFACE.editableText))).toBe(true);
    expect(hasValue(node('spin_button', IFACE.editableText, IFACE.value))).toBe(true);
    expect(hasValue(node('slider', IFACE.value))).toBe(true);
    expect(hasValue(node('scroll_bar', IFACE.value))).toBe(true);
    expect(hasValue(node('terminal', IFACE.text))).toBe(true);
    // A Calc cell: Value and Text, no EditableText; its value is what the sheet shows.
    expect(hasValue(node('table_cell', IFACE.value, IFACE.text))).toBe(true);
  });

  it('skips values that only repeat a label or a state (LibreOffice menus, toolbar buttons)', () => {
    expect(hasValue(node('menu', IFACE.editableText))).toBe(false);
    expect(hasValue(node('push_button', IFACE.value))).toBe(false);
    expect(hasValue(node('toggle_button', IFACE.value))).toBe(false);
    expect(hasValue(node('separator', IFACE.value))).toBe(false);
    expect(hasValue(node('panel', IFACE.value))).toBe(false);
    expect(hasValue(node('label', IFACE.text))).toBe(false);
  });
});
