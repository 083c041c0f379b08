import { describe, expect, it } from 'vitest';
import {
  actionsFor,
  IFACE,
  isSecure,
  roleName,
  roleNumber,
  statesFromBits,
} from './atspi-constants.js';

describe('AT-SPI constants', () => {
  it('decodes roles by number and back', () => {
    expect(roleName(43)).toBe('push_button');
    expect(roleName(40)).toBe('password_text');
    expect(roleName(999)).toBe('role_999');
    expect(roleNumber('check_box')).toBe(7);
  });

  it('decodes the two state words, dropping states the contract does not list', () => {
    // Bits measured on a GTK3 push button: enabled, focusable, sensitive, showing, visible.
    expect(statesFromBits([1124075776, 0])).toEqual([
      'enabled',
      'focusable',
      'sensitive',
      'showing',
      'visible',
    ]);
    // Bit 41 (checkable) lives in the second word.
    expect(statesFromBits([1 << 4, 1 << 9])).toEqual(['checked', 'checkable']);
    expect(statesFromBits([])).toEqual([]);
  });

  it('derives actions from interfaces and states only', () => {
    const button = new Set([IFACE.accessible, IFACE.action, IFACE.component]);
    expect(actionsFor('push_button', button, ['focusable'])).toEqual([
      'click',
      'focus',
      'scroll_into_view',
    ]);
    expect(actionsFor('check_box', button, [])).toEqual(['click', 'toggle', 'scroll_into_view']);
    const entry = new Set([IFACE.accessible, IFACE.editableText, IFACE.text, IFACE.component]);
    expect(actionsFor('text', entry, [])).toEqual(['set_value', 'type_text', 'scroll_into_view']);
    expect(actionsFor('label', new Set([IFACE.accessible]), [])).toEqual([]);
  });

  it('offers set_value on an editable web field without EditableText, not on cells or terminals', () => {
    const web = new Set([IFACE.accessible, IFACE.text, IFACE.component]);
    expect(actionsFor('entry', web, ['editable'])).toContain('set_value');
    // Typed through the focus as well (issue 38): both text actions reach a web field.
    expect(actionsFor('entry', web, ['editable'])).toContain('type_text');
    expect(actionsFor('entry', web, [])).not.toContain('set_value');
    expect(actionsFor('terminal', web, ['editable', 'focusable'])).not.toContain('set_value');
    expect(actionsFor('table_cell', web, ['editable', 'focusable'])).not.toContain('set_value');
  });

  it('treats password_text as secure', () => {
    expect(isSecure('password_text')).toBe(true);
    expect(isSecure('text')).toBe(false);
  });
});
