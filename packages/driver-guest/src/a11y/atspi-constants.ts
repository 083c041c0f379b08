import type { ElementActionName, ElementState } from '@cubicle/contract/guest';
import { ElementState as ElementStateSchema } from '@cubicle/contract/guest';

// AtspiRole in enum order (at-spi2-core atspi-constants.h); a role's number is its index.
const ROLES = [
  'invalid',
  'accelerator_label',
  'alert',
  'animation',
  'arrow',
  'calendar',
  'canvas',
  'check_box',
  'check_menu_item',
  'color_chooser',
  'column_header',
  'combo_box',
  'date_editor',
  'desktop_icon',
  'desktop_frame',
  'dial',
  'dialog',
  'directory_pane',
  'drawing_area',
  'file_chooser',
  'filler',
  'focus_traversable',
  'font_chooser',
  'frame',
  'glass_pane',
  'html_container',
  'icon',
  'image',
  'internal_frame',
  'label',
  'layered_pane',
  'list',
  'list_item',
  'menu',
  'menu_bar',
  'menu_item',
  'option_pane',
  'page_tab',
  'page_tab_list',
  'panel',
  'password_text',
  'popup_menu',
  'progress_bar',
  'push_button',
  'radio_button',
  'radio_menu_item',
  'root_pane',
  'row_header',
  'scroll_bar',
  'scroll_pane',
  'separator',
  'slider',
  'spin_button',
  'split_pane',
  'status_bar',
  'table',
  'table_cell',
  'table_column_header',
  'table_row_header',
  'tearoff_menu_item',
  'terminal',
  'text',
  'toggle_button',
  'tool_bar',
  'tool_tip',
  'tree',
  'tree_table',
  'unknown',
  'viewport',
  'window',
  'extended',
  'header',
  'footer',
  'paragraph',
  'ruler',
  'application',
  'autocomplete',
  'editbar',
  'embedded',
  'entry',
  'chart',
  'caption',
  'document_frame',
  'heading',
  'page',
  'section',
  'redundant_object',
  'form',
  'link',
  'input_method_window',
  'table_row',
  'tree_item',
  'document_spreadsheet',
  'document_presentation',
  'document_text',
  'document_web',
  'document_email',
  'comment',
  'list_box',
  'grouping',
  'image_map',
  'notification',
  'info_bar',
  'level_bar',
  'title_bar',
  'block_quote',
  'audio',
  'video',
  'definition',
  'article',
  'landmark',
  'log',
  'marquee',
  'math',
  'rating',
  'timer',
  'static',
  'math_fraction',
  'math_root',
  'subscript',
  'superscript',
  'description_list',
  'description_term',
  'description_value',
  'footnote',
  'content_deletion',
  'content_insertion',
  'mark',
  'suggestion',
  'push_button_menu',
] as const;

// AtspiStateType in enum order; bit n of the two-word state set is state n.
const STATES = [
  'invalid',
  'active',
  'armed',
  'busy',
  'checked',
  'collapsed',
  'defunct',
  'editable',
  'enabled',
  'expandable',
  'expanded',
  'focusable',
  'focused',
  'has_tooltip',
  'horizontal',
  'iconified',
  'modal',
  'multi_line',
  'multiselectable',
  'opaque',
  'pressed',
  'resizable',
  'selectable',
  'selected',
  'sensitive',
  'showing',
  'single_line',
  'stale',
  'transient',
  'vertical',
  'visible',
  'manages_descendants',
  'indeterminate',
  'required',
  'truncated',
  'animated',
  'invalid_entry',
  'supports_autocompletion',
  'selectable_text',
  'is_default',
  'visited',
  'checkable',
  'has_popup',
  'read_only',
] as const;

/** roleName maps an AT-SPI role number to its snake_case name; unknown numbers stay visible. */
export function roleName(role: number): string {
  return ROLES[role] ?? `role_${role}`;
}

/** roleNumber is the inverse of roleName, for reading roles from names in tests. */
export function roleNumber(name: string): number {
  return (ROLES as readonly string[]).indexOf(name);
}

const known = new Set<string>(ElementStateSchema.options);

/**
 * statesFromBits decodes AT-SPI's two 32-bit state words. States this contract does not list
 * (newer AT-SPI) are dropped, as the contract's ElementState documents.
 */
export function statesFromBits(words: readonly number[]): ElementState[] {
  const out: ElementState[] = [];
  for (let i = 1; i < STATES.length; i++) {
    const word = words[i >> 5] ?? 0;
    if ((word >>> (i & 31)) & 1) {
      const name = STATES[i] as string;
      if (known.has(name)) out.push(name as ElementState);
    }
  }
  return out;
}

export const IFACE = {
  accessible: 'org.a11y.atspi.Accessible',
  action: 'org.a11y.atspi.Action',
  component: 'org.a11y.atspi.Component',
  editableText: 'org.a11y.atspi.EditableText',
  text: 'org.a11y.atspi.Text',
  value: 'org.a11y.atspi.Value',
  selection: 'org.a11y.atspi.Selection',
  table: 'org.a11y.atspi.Table',
  cache: 'org.a11y.atspi.Cache',
  registry: 'org.a11y.atspi.Registry',
} as const;

const TOGGLE_ROLES = new Set([
  'check_box',
  'radio_button',
  'toggle_button',
  'check_menu_item',
  'radio_menu_item',
]);
const SELECTABLE_PARENTS_HINT = new Set([
  'list_item',
  'page_tab',
  'table_cell',
  'menu_item',
  'tree_item',
]);

/**
 * isSecure says whether an element's value must never leave the driver. GTK3 gives entries with
 * visibility off the `password_text` role; that role is the only signal AT-SPI has.
 */
export function isSecure(role: string): boolean {
  return role === 'password_text';
}

/**
 * Roles that take typed keys through the focus without exposing editable text: a spreadsheet
 * cell (Calc edits it in a cell editor that exists only while typing) and a terminal (VTE).
 * They are typed in the foreground (see typeIntoFocusable).
 */
const KEY_TARGET_ROLES = new Set(['table_cell', 'terminal']);

/**
 * isTypedField: an editable text field without EditableText (Chromium's web inputs), whose value
 * can only be typed through the keyboard focus (replace-by-keys.ts). Cells and terminals take
 * keys too, but select-all and retype would not replace a value there (a command line, a formula).
 */
export function isTypedField(
  role: string,
  ifaces: ReadonlySet<string>,
  states: readonly ElementState[],
): boolean {
  return (
    !KEY_TARGET_ROLES.has(role) &&
    !ifaces.has(IFACE.editableText) &&
    ifaces.has(IFACE.text) &&
    states.includes('editable')
  );
}

/**
 * actionsFor derives what `act` can do from the element's interfaces: the contract promises
 * a row lists only actions its AT-SPI interfaces support.
 */
export function actionsFor(
  role: string,
  ifaces: ReadonlySet<string>,
  states: readonly ElementState[],
): ElementActionName[] {
  const out: ElementActionName[] = [];
  if (ifaces.has(IFACE.action)) out.push('click');
  if (
    ifaces.has(IFACE.editableText) ||
    ifaces.has(IFACE.value) ||
    isTypedField(role, ifaces, states)
  )
    out.push('set_value');
  if (
    ifaces.has(IFACE.editableText) ||
    isTypedField(role, ifaces, states) ||
    (KEY_TARGET_ROLES.has(role) && ifaces.has(IFACE.component) && states.includes('focusable'))
  )
    out.push('type_text');
  if (ifaces.has(IFACE.component) && states.includes('focusable')) out.push('focus');
  if (ifaces.has(IFACE.action) && (TOGGLE_ROLES.has(role) || states.includes('checkable')))
    out.push('toggle');
  if (states.includes('selectable') || SELECTABLE_PARENTS_HINT.has(role)) out.push('select');
  if (ifaces.has(IFACE.component)) out.push('scroll_into_view');
  return out;
}
