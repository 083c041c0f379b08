import { invalidAction } from './tool-error.js';

/** Modifier is a key Cubicle holds around another (the guest's KeyModifier). */
export type Modifier = 'ctrl' | 'shift' | 'alt' | 'super';

// Names models use for the modifiers: xdotool's (`ctrl`, `Control_L`), OpenAI's (`CTRL`,
// `CMD`, `META`, `OPTION`), and the ones people write. Looked up in lower case.
const MODIFIERS: Record<string, Modifier> = {
  ctrl: 'ctrl',
  control: 'ctrl',
  ctl: 'ctrl',
  control_l: 'ctrl',
  control_r: 'ctrl',
  shift: 'shift',
  shift_l: 'shift',
  shift_r: 'shift',
  alt: 'alt',
  option: 'alt',
  alt_l: 'alt',
  alt_r: 'alt',
  super: 'super',
  super_l: 'super',
  super_r: 'super',
  cmd: 'super',
  command: 'super',
  meta: 'super',
  win: 'super',
  windows: 'super',
};

/** A modifier pressed on its own (OpenAI `keypress ["SHIFT"]`, Anthropic `hold_key "shift"`). */
const MODIFIER_KEYSYM: Record<Modifier, string> = {
  ctrl: 'Control_L',
  shift: 'Shift_L',
  alt: 'Alt_L',
  super: 'Super_L',
};

// Other names for the keys the guest knows by keysym name (Cubicle's KeyCombo), lower case.
// prettier-ignore
const ALIASES: Record<string, string> = {
  enter: 'Return', return: 'Return', esc: 'Escape', escape: 'Escape', tab: 'Tab',
  space: 'space', backspace: 'BackSpace', delete: 'Delete', del: 'Delete', insert: 'Insert',
  home: 'Home', end: 'End', pageup: 'Prior', page_up: 'Prior', prior: 'Prior', pgup: 'Prior',
  pagedown: 'Next', page_down: 'Next', next: 'Next', pgdn: 'Next',
  up: 'Up', arrowup: 'Up', down: 'Down', arrowdown: 'Down', left: 'Left', arrowleft: 'Left',
  right: 'Right', arrowright: 'Right', capslock: 'Caps_Lock', caps_lock: 'Caps_Lock',
  print: 'Print', printscreen: 'Print', menu: 'Menu', pause: 'Pause', numlock: 'Num_Lock',
  kp_enter: 'KP_Enter',
  ' ': 'space', '!': 'exclam', '"': 'quotedbl', '#': 'numbersign', $: 'dollar', '%': 'percent',
  '&': 'ampersand', "'": 'apostrophe', '(': 'parenleft', ')': 'parenright', '*': 'asterisk',
  '+': 'plus', ',': 'comma', '-': 'minus', '.': 'period', '/': 'slash', ':': 'colon',
  ';': 'semicolon', '<': 'less', '=': 'equal', '>': 'greater', '?': 'question', '@': 'at',
  '[': 'bracketleft', '\\': 'backslash', ']': 'bracketright', '^': 'asciicircum',
  _: 'underscore', '`': 'grave', '{': 'braceleft', '|': 'bar', '}': 'braceright', '~': 'asciitilde',
};

/**
 * keysymName maps one key name to the guest's keysym name. `foldCase` lowers a single letter:
 * OpenAI writes `["CTRL", "A"]` for Ctrl+A, where xdotool's `ctrl+A` means Ctrl+Shift+A.
 * Any other word of keysym characters passes through; the guest refuses one it does not know
 * (`unsupported_text`), before anything is pressed.
 */
export function keysymName(name: string, foldCase: boolean): string {
  if (/^[A-Za-z]$/.test(name)) return foldCase ? name.toLowerCase() : name;
  if (/^[0-9]$/.test(name)) return name;
  const lower = name.toLowerCase();
  const fn = /^f([1-9]|[12][0-9]|3[0-5])$/.exec(lower);
  if (fn) return `F${fn[1]}`;
  const alias = ALIASES[lower] ?? ALIASES[name];
  if (alias) return alias;
  const modifier = MODIFIERS[lower];
  if (modifier) return MODIFIER_KEYSYM[modifier];
  if (/^[A-Za-z0-9_]+$/.test(name)) return name;
  throw invalidAction(`"${name}" is not a key name`, { key: name });
}

/** modifierOf names the modifier a key name stands for, or null for an ordinary key. */
export function modifierOf(name: string): Modifier | null {
  return MODIFIERS[name.toLowerCase()] ?? null;
}

/**
 * toCombos turns a list of keys pressed together into Cubicle key combos (`ctrl+shift+t`): the
 * modifiers are held around each other key in turn; modifiers alone press the last of them.
 */
export function toCombos(keys: string[], foldCase: boolean): string[] {
  if (keys.length === 0) throw invalidAction('no key to press', { keys });
  const modifiers: Modifier[] = [];
  const others: string[] = [];
  for (const k of keys) {
    const m = modifierOf(k);
    if (m && !modifiers.includes(m)) modifiers.push(m);
    else if (!m) others.push(keysymName(k, foldCase));
  }
  if (others.length === 0) {
    const last = modifiers.pop()!;
    return [[...modifiers, MODIFIER_KEYSYM[last]].join('+')];
  }
  return others.map((k) => [...modifiers, k].join('+'));
}

/**
 * xdotoolCombos reads an xdotool key argument as Anthropic's `key` action sends it: combos
 * joined by `+`, several separated by spaces (`ctrl+a Delete`). A lone `+` key is `plus`.
 */
export function xdotoolCombos(text: string): string[] {
  const out: string[] = [];
  for (const chord of text.trim().split(/\s+/)) {
    if (chord === '') continue;
    const keys = chord === '+' ? ['+'] : chord.replace(/\+\+$/, '+plus').split('+');
    out.push(...toCombos(keys, false));
  }
  if (out.length === 0) throw invalidAction('no key to press', { text });
  return out;
}

/** modifierList reads Anthropic's `text` on a click or scroll: modifiers to hold (`shift`, `ctrl+alt`). */
export function modifierList(text: string | undefined): Modifier[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  return text
    .trim()
    .split(/[\s+]+/)
    .map((k) => {
      const m = modifierOf(k);
      if (!m)
        throw invalidAction(`"${k}" is not a modifier key (shift, ctrl, alt, super)`, { text });
      return m;
    });
}
