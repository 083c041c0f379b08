"""Key names of computer-use tools (xdotool's, OpenAI's, people's) mapped to the keysym combos
Cubicle's pixel `key` input takes (`ctrl+shift+Tab`, `Return`)."""

from __future__ import annotations

import re
from typing import List, Optional

from ._errors import CubicleError


class ComputerToolError(CubicleError):
    """A tool call the adapter cannot map (unknown action, bad argument); nothing was sent."""

    def __init__(self, message: str, **details: object):
        super().__init__(message, code="invalid_tool_action", details=details)


_MODIFIERS = {
    **dict.fromkeys(("ctrl", "control", "ctl", "control_l", "control_r"), "ctrl"),
    **dict.fromkeys(("shift", "shift_l", "shift_r"), "shift"),
    **dict.fromkeys(("alt", "option", "alt_l", "alt_r"), "alt"),
    **dict.fromkeys(
        ("super", "super_l", "super_r", "cmd", "command", "meta", "win", "windows"), "super"
    ),
}
_MODIFIER_KEYSYM = {"ctrl": "Control_L", "shift": "Shift_L", "alt": "Alt_L", "super": "Super_L"}
_ALIASES = {
    **dict.fromkeys(("enter", "return"), "Return"),
    **dict.fromkeys(("esc", "escape"), "Escape"),
    **dict.fromkeys(("delete", "del"), "Delete"),
    **dict.fromkeys(("pageup", "page_up", "prior", "pgup"), "Prior"),
    **dict.fromkeys(("pagedown", "page_down", "next", "pgdn"), "Next"),
    **dict.fromkeys(("up", "arrowup"), "Up"),
    **dict.fromkeys(("down", "arrowdown"), "Down"),
    **dict.fromkeys(("left", "arrowleft"), "Left"),
    **dict.fromkeys(("right", "arrowright"), "Right"),
    **dict.fromkeys(("capslock", "caps_lock"), "Caps_Lock"),
    **dict.fromkeys(("print", "printscreen"), "Print"),
    "tab": "Tab", "space": "space", "backspace": "BackSpace", "insert": "Insert",
    "home": "Home", "end": "End", "menu": "Menu", "pause": "Pause", "numlock": "Num_Lock",
    "kp_enter": "KP_Enter",
    " ": "space", "!": "exclam", '"': "quotedbl", "#": "numbersign", "$": "dollar",
    "%": "percent", "&": "ampersand", "'": "apostrophe", "(": "parenleft", ")": "parenright",
    "*": "asterisk", "+": "plus", ",": "comma", "-": "minus", ".": "period", "/": "slash",
    ":": "colon", ";": "semicolon", "<": "less", "=": "equal", ">": "greater", "?": "question",
    "@": "at", "[": "bracketleft", "\\": "backslash", "]": "bracketright", "^": "asciicircum",
    "_": "underscore", "`": "grave", "{": "braceleft", "|": "bar", "}": "braceright",
    "~": "asciitilde",
}  # fmt: skip


def keysym_name(name: str, fold_case: bool) -> str:
    """keysym_name maps a key name to the guest's keysym name; OpenAI's "A" (fold_case) is a."""
    if re.fullmatch(r"[A-Za-z]", name):
        return name.lower() if fold_case else name
    if re.fullmatch(r"[0-9]", name):
        return name
    lower = name.lower()
    fn = re.fullmatch(r"f([1-9]|[12][0-9]|3[0-5])", lower)
    if fn:
        return "F" + fn.group(1)
    alias = _ALIASES.get(lower) or _ALIASES.get(name)
    if alias:
        return alias
    if lower in _MODIFIERS:
        return _MODIFIER_KEYSYM[_MODIFIERS[lower]]
    if re.fullmatch(r"[A-Za-z0-9_]+", name):
        return name  # the guest refuses a name it does not know, before pressing anything
    raise ComputerToolError(f'"{name}" is not a key name', key=name)


def to_combos(keys: List[str], fold_case: bool) -> List[str]:
    """to_combos turns keys pressed together into combos, modifiers held around each other key."""
    if not keys:
        raise ComputerToolError("no key to press", keys=keys)
    modifiers: List[str] = []
    others: List[str] = []
    for k in keys:
        m = _MODIFIERS.get(k.lower())
        if m and m not in modifiers:
            modifiers.append(m)
        elif not m:
            others.append(keysym_name(k, fold_case))
    if not others:
        last = modifiers.pop()
        return ["+".join([*modifiers, _MODIFIER_KEYSYM[last]])]
    return ["+".join([*modifiers, k]) for k in others]


def xdotool_combos(text: str) -> List[str]:
    """xdotool_combos reads Anthropic's `key` text: `ctrl+s`, several as `ctrl+a Delete`."""
    out: List[str] = []
    for chord in text.split():
        keys = ["+"] if chord == "+" else re.sub(r"\+\+$", "+plus", chord).split("+")
        out.extend(to_combos(keys, False))
    if not out:
        raise ComputerToolError("no key to press", text=text)
    return out


def modifier_list(text: Optional[str]) -> Optional[List[str]]:
    """modifier_list reads the modifiers Anthropic's `text` holds on a click or scroll."""
    if text is None or not text.strip():
        return None
    out = []
    for k in re.split(r"[\s+]+", text.strip()):
        m = _MODIFIERS.get(k.lower())
        if not m:
            raise ComputerToolError(f'"{k}" is not a modifier key (shift, ctrl, alt, super)', text=text)
        out.append(m)
    return out
