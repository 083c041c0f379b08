import type { ActionResult } from '@cubicle/contract/guest';
import { describe, expect, it } from 'vitest';
import { IFACE } from './atspi-constants.js';
import { autoDelivery, inWebPage, markAutoSelected } from './auto-delivery.js';
import type { NodeData } from './read-node.js';

const node = (role: string, ifaces: string[]): NodeData => ({
  path: '/a',
  parent: null,
  children: [],
  role,
  name: '',
  description: '',
  states: [],
  ifaces: new Set([IFACE.accessible, ...ifaces]),
});

describe('autoDelivery', () => {
  it('keeps text in the background where EditableText (or Value) takes it', () => {
    const gtkEntry = node('text', [IFACE.text, IFACE.editableText]);
    expect(autoDelivery('type_text', gtkEntry, false)).toBe('background');
    expect(autoDelivery('set_value', gtkEntry, false)).toBe('background');
    expect(autoDelivery('set_value', node('spin_button', [IFACE.value]), false)).toBe('background');
  });

  it('types through the focus where only the keyboard reaches the element', () => {
    const webField = node('entry', [IFACE.text, IFACE.component]);
    expect(autoDelivery('type_text', webField, true)).toBe('foreground');
    expect(autoDelivery('set_value', webField, true)).toBe('foreground');
    expect(autoDelivery('type_text', node('terminal', [IFACE.component]), false)).toBe(
      'foreground',
    );
  });

  it('types into a web page through the focus even where it offers EditableText (Firefox)', () => {
    const firefoxField = node('entry', [IFACE.text, IFACE.editableText, IFACE.component]);
    expect(autoDelivery('type_text', firefoxField, true)).toBe('foreground');
    expect(autoDelivery('set_value', firefoxField, true)).toBe('foreground');
    expect(inWebPage([{ role: 'form' }, { role: 'document_web' }, { role: 'frame' }])).toBe(true);
    expect(inWebPage([{ role: 'panel' }, { role: 'frame' }])).toBe(false);
  });

  it('leaves every other action in the background', () => {
    const webField = node('entry', [IFACE.text, IFACE.component, IFACE.action]);
    for (const action of ['click', 'focus', 'toggle', 'select', 'scroll_into_view'] as const)
      expect(autoDelivery(action, webField, true)).toBe('background');
  });
});

describe('markAutoSelected', () => {
  it('marks a delivery and leaves a refusal without one', () => {
    const done = {
      effect: 'unverifiable',
      route: 'xtest',
      duration_ms: 1,
      retry_safe: false,
      delivery: { mode: 'foreground' },
    } as ActionResult;
    expect(markAutoSelected(done)).toMatchObject({
      delivery: { mode: 'foreground', auto_selected: true },
    });
    const refusal = {
      effect: 'refused',
      route: 'accessibility',
      duration_ms: 1,
      retry_safe: true,
      error: { code: 'action_not_supported', hint: 'no' },
    } as ActionResult;
    expect(markAutoSelected(refusal)).not.toHaveProperty('delivery');
  });
});
