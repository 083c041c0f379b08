import type { AtspiBus } from './atspi-bus.js';
import { IFACE, isSecure } from './atspi-constants.js';
import type { NodeData } from './read-node.js';

/**
 * Roles whose text is their label. LibreOffice gives its menus EditableText that holds the menu's
 * name: as a value it only repeats the name.
 */
const LABEL_TEXT_ROLES = new Set([
  'menu',
  'menu_item',
  'menu_bar',
  'push_button',
  'toggle_button',
  'check_box',
  'radio_button',
  'label',
  'page_tab',
]);

/**
 * Roles whose Value is what they show: numeric controls, and spreadsheet cells (a Calc cell
 * carries Value and Text, no EditableText; its row's value is the cell's text, "42.5").
 * LibreOffice gives every toolbar button, toggle, separator and panel a Value of 0 or 1 that
 * mirrors its state (`pressed`, `checked`): 69 of the 83 values an empty Writer's lean observe
 * read, one call each, saying nothing the states did not (measured).
 */
const NUMERIC_ROLES = new Set([
  'table_cell',
  'slider',
  'spin_button',
  'scroll_bar',
  'progress_bar',
  'dial',
  'level_bar',
]);

/** hasValue: elements whose row carries a value (editable text, numeric values, a terminal's screen). */
export function hasValue(node: NodeData): boolean {
  if (node.ifaces.has(IFACE.editableText)) return !LABEL_TEXT_ROLES.has(node.role);
  if (node.ifaces.has(IFACE.value)) return NUMERIC_ROLES.has(node.role);
  return node.ifaces.has(IFACE.text) && (node.role === 'text' || node.role === 'terminal');
}

/**
 * readValue reads an element's current value: its whole text, or its numeric value as a string.
 * Never call it for a secure field's caller-visible output; `readLength` is the secure read.
 */
export async function readValue(bus: AtspiBus, appBus: string, node: NodeData): Promise<string> {
  if (node.ifaces.has(IFACE.text)) {
    const [text] = await bus.call(appBus, node.path, IFACE.text, 'GetText', 'ii', [0, -1]);
    return String(text);
  }
  const v = await bus.getProperty({ bus: appBus, path: node.path }, IFACE.value, 'CurrentValue');
  return formatNumber(Number(v));
}

/** readLength counts a text element's characters without reading them (secure read-back). */
export async function readLength(bus: AtspiBus, appBus: string, node: NodeData): Promise<number> {
  return Number(
    await bus.getProperty({ bus: appBus, path: node.path }, IFACE.text, 'CharacterCount'),
  );
}

function formatNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(12)));
}

/**
 * readValues reads the values of many rows at once (pipelined). Secure fields are skipped here so
 * no code path downstream can leak them; their entry is `secure`.
 */
export async function readValues(
  bus: AtspiBus,
  appBus: string,
  nodes: readonly NodeData[],
): Promise<
  Map<string, { kind: 'value'; value: string } | { kind: 'secure' } | { kind: 'unreadable' }>
> {
  const out = new Map<
    string,
    { kind: 'value'; value: string } | { kind: 'secure' } | { kind: 'unreadable' }
  >();
  await Promise.all(
    nodes.map(async (n) => {
      if (isSecure(n.role)) {
        out.set(n.path, { kind: 'secure' });
        return;
      }
      if (!hasValue(n)) return;
      try {
        out.set(n.path, { kind: 'value', value: await readValue(bus, appBus, n) });
      } catch {
        out.set(n.path, { kind: 'unreadable' });
      }
    }),
  );
  return out;
}
