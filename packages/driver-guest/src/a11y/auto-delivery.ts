import type { ActionResult, DeliveryMode, ElementActionRequest } from '@cubicle/contract/guest';
import { IFACE } from './atspi-constants.js';
import type { NodeData } from './read-node.js';

/**
 * inWebPage says whether an element belongs to a page in a browser. Browsers take no text into a
 * page's fields through AT-SPI: Chromium exposes no EditableText there, and Firefox ESR 128
 * exposes it, answers SetTextContents and InsertText with success and changes nothing (measured:
 * read back "" after 2 s, `suspected_noop`). Only keys through the focus reach them.
 */
export function inWebPage(ancestors: readonly { role: string }[]): boolean {
  return ancestors.some((a) => a.role === 'document_web');
}

/**
 * autoDelivery chooses the delivery mode for an element action that named none, from the
 * element's interfaces alone and before anything is delivered (never by retrying a failed
 * background attempt in the foreground, which could deliver the input twice). Text reaches an
 * element in the background only through EditableText (or Value, for set_value), and never into
 * a web page (see inWebPage); spreadsheet cells and terminals have neither, so typing into them
 * needs the keyboard focus: foreground. Every other action has a background route (Action, Component, Selection).
 */
export function autoDelivery(
  action: ElementActionRequest['action'],
  node: NodeData,
  webPage: boolean,
): DeliveryMode {
  const editable = node.ifaces.has(IFACE.editableText) && !webPage;
  if (action === 'type_text') return editable ? 'background' : 'foreground';
  if (action === 'set_value')
    return editable || (node.ifaces.has(IFACE.value) && !webPage) ? 'background' : 'foreground';
  return 'background';
}

/** markAutoSelected tells the caller the mode in `delivery` was the driver's choice. */
export function markAutoSelected(result: ActionResult): ActionResult {
  // A refusal has no delivery (nothing was delivered): nothing to mark.
  if (result.effect === 'refused') return result;
  // The result and its delivery are built for this one request: marking them in place is safe.
  result.delivery.auto_selected = true;
  return result;
}
