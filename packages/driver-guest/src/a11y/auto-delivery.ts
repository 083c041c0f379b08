import type { ActionResult, DeliveryMode, ElementActionRequest } from '@cubicle/contract/guest';
import { IFACE } from './atspi-constants.js';
import type { NodeData } from './read-node.js';

/**
 * autoDelivery chooses the delivery mode for an element action that named none, from the
 * element's interfaces alone and before anything is delivered (never by retrying a failed
 * background attempt in the foreground, which could deliver the input twice). Text reaches an
 * element in the background only through EditableText (or Value, for set_value); Chromium's web
 * fields, spreadsheet cells and terminals have neither, so typing into them needs the keyboard
 * focus: foreground. Every other action has a background route (Action, Component, Selection).
 */
export function autoDelivery(action: ElementActionRequest['action'], node: NodeData): DeliveryMode {
  const editable = node.ifaces.has(IFACE.editableText);
  if (action === 'type_text') return editable ? 'background' : 'foreground';
  if (action === 'set_value')
    return editable || node.ifaces.has(IFACE.value) ? 'background' : 'foreground';
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
