"""Computer-use tool calls (Anthropic's `computer` tool, OpenAI's computer-use actions) mapped to
Cubicle's pixel input on the whole display, as plans the async and sync tools both run.

A plan is a list of steps: ("screenshot",), ("zoom", [x0, y0, x1, y1]), ("cursor",),
("wait", seconds) or ("input", pixel_action). Pixel actions are in the model's pixels (the
screenshot's); Cubicle maps them to the screen. A call that cannot be mapped raises
ComputerToolError (`invalid_tool_action`) before anything is sent.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

from ._computer_keys import ComputerToolError, modifier_list, to_combos, xdotool_combos

# ComputerToolError, to_combos and xdotool_combos are re-exported for the tools and the tests.
__all__ = [
    "ComputerToolError",
    "anthropic_plan",
    "describe_result",
    "openai_plan",
    "to_combos",
    "xdotool_combos",
]

Step = Tuple[Any, ...]

# The Anthropic tool versions spoken here: computer_20250124 (Claude 4 models, beta header
# computer-use-2025-01-24) and computer_20251124 (Opus 4.5 and later, computer-use-2025-11-24,
# which adds `zoom` when the definition sets enable_zoom).
ANTHROPIC_VERSIONS = ("computer_20250124", "computer_20251124")
DEFAULT_MAX_DIMENSION = 1280
# A hold or wait longer than this is refused: one tool call should not hold the claim's lane.
MAX_DURATION_S = 30.0
MAX_TYPE_CHARS = 10_000
# OpenAI's scroll amounts are pixels; one wheel notch per this many (at least one is sent).
SCROLL_PIXELS_PER_NOTCH = 100


def _input(value: Any) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise ComputerToolError("the tool input must be a JSON object", input=value)
    return value


def _int(a: Dict[str, Any], key: str, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
    v = a.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ComputerToolError(f'"{key}" must be a number', **{key: v})
    n = int(round(v))
    if (lo is not None and n < lo) or (hi is not None and n > hi):
        raise ComputerToolError(f'"{key}" must be between {lo} and {hi}', **{key: v})
    return n


def _number(a: Dict[str, Any], key: str, fallback: float) -> float:
    v = a.get(key)
    if v is None:
        return fallback
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise ComputerToolError(f'"{key}" must be a non-negative number', **{key: v})
    return float(v)


def _str(a: Dict[str, Any], key: str) -> str:
    v = a.get(key)
    if not isinstance(v, str) or v == "":
        raise ComputerToolError(f'"{key}" must be a non-empty string', **{key: v})
    return v


def _point(a: Dict[str, Any], key: str) -> Dict[str, int]:
    v = a.get(key)
    if not isinstance(v, list) or len(v) != 2:
        raise ComputerToolError(f'"{key}" must be [x, y]', **{key: v})
    pair = {"x": v[0], "y": v[1]}
    return {"x": _int(pair, "x", 0), "y": _int(pair, "y", 0)}


def _duration(a: Dict[str, Any]) -> float:
    seconds = _number(a, "duration", 1.0)
    if seconds > MAX_DURATION_S:
        raise ComputerToolError(f'"duration" is at most {MAX_DURATION_S:g} seconds', duration=seconds)
    return seconds


def _typing(text: str) -> List[Step]:
    return [
        ("input", {"action": "type", "text": text[i : i + MAX_TYPE_CHARS]})
        for i in range(0, len(text), MAX_TYPE_CHARS)
    ]


def anthropic_plan(raw: Any, enable_zoom: bool) -> List[Step]:
    """anthropic_plan maps one `computer` tool_use input. A point left out (a click's, a
    mouse button's) is where the pointer is: ("cursor",) comes first and fills it in."""
    a = _input(raw)
    action = _str(a, "action")
    at_or_cursor = (lambda: _point(a, "coordinate")) if "coordinate" in a else (lambda: None)

    def mods() -> Dict[str, Any]:
        held = modifier_list(_str(a, "text") if "text" in a else None)
        return {"modifiers": held} if held else {}

    def pointer(body: Dict[str, Any]) -> List[Step]:
        where = at_or_cursor()
        return [("input", {**body, **(where or {})}, where is None)]

    if action == "screenshot":
        return [("screenshot",)]
    if action == "zoom":
        if not enable_zoom:
            raise ComputerToolError(
                "zoom needs a computer_20251124 tool defined with enable_zoom", action=action
            )
        region = a.get("region")
        if not isinstance(region, list) or len(region) != 4:
            raise ComputerToolError('"region" must be [x0, y0, x1, y1]', region=region)
        box = [_int({"v": v}, "v", 0) for v in region]
        if box[2] <= box[0] or box[3] <= box[1]:
            raise ComputerToolError("region must have x0 < x1 and y0 < y1", region=region)
        return [("zoom", box)]
    if action == "cursor_position":
        return [("cursor",)]
    if action == "wait":
        return [("wait", _duration(a))]
    clicks = {
        "left_click": {},
        "right_click": {"button": "right"},
        "middle_click": {"button": "middle"},
        "double_click": {"count": 2},
        "triple_click": {"count": 3},
    }
    if action in clicks:
        return pointer({"action": "click", **clicks[action], **mods()})
    if action == "mouse_move":
        return [("input", {"action": "move", **_point(a, "coordinate")})]
    if action in ("left_mouse_down", "left_mouse_up"):
        return pointer({"action": "mouse_down" if action == "left_mouse_down" else "mouse_up"})
    if action == "left_click_drag":
        start, to = _point(a, "start_coordinate"), _point(a, "coordinate")
        return [("input", {"action": "drag", **start, "to_x": to["x"], "to_y": to["y"]})]
    if action == "scroll":
        direction = _str(a, "scroll_direction")
        amount = _int(a, "scroll_amount", 1, 50)
        d = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}.get(direction)
        if d is None:
            raise ComputerToolError('"scroll_direction" is up, down, left or right', direction=direction)
        return pointer({"action": "scroll", "dx": d[0] * amount, "dy": d[1] * amount, **mods()})
    if action == "type":
        return _typing(_str(a, "text"))
    if action == "key":
        return [("input", {"action": "key", "keys": c}) for c in xdotool_combos(_str(a, "text"))]
    if action == "hold_key":
        seconds = _duration(a)
        combos = xdotool_combos(_str(a, "text"))
        if len(combos) != 1:
            raise ComputerToolError("hold_key holds one key or combo", text=a.get("text"))
        return [("input", {"action": "key", "keys": combos[0], "hold_ms": int(round(seconds * 1000))})]
    raise ComputerToolError(f'unknown computer action "{action}"', action=action)


_BUTTONS = {"left": "left", "right": "right", "wheel": "middle", "back": "back", "forward": "forward"}


def _notches(pixels: int) -> int:
    if pixels == 0:
        return 0
    n = min(50, max(1, round(abs(pixels) / SCROLL_PIXELS_PER_NOTCH)))
    return n if pixels > 0 else -n


def openai_plan(raw: Any) -> List[Step]:
    """openai_plan maps one OpenAI computer-use action (`computer_call.action`)."""
    a = _input(raw)
    kind = _str(a, "type")

    def at() -> Dict[str, int]:
        return {"x": _int(a, "x", 0), "y": _int(a, "y", 0)}

    if kind == "screenshot":
        return []
    if kind == "wait":
        ms = _number(a, "duration", 1000.0)
        if ms > MAX_DURATION_S * 1000:
            raise ComputerToolError('"duration" is at most 30000 ms', duration=ms)
        return [("wait", ms / 1000)]
    if kind == "click":
        name = _str(a, "button") if "button" in a else "left"
        if name not in _BUTTONS:
            raise ComputerToolError('"button" is left, right, wheel, back or forward', button=name)
        return [("input", {"action": "click", "button": _BUTTONS[name], **at()})]
    if kind == "double_click":
        return [("input", {"action": "click", "count": 2, **at()})]
    if kind == "move":
        return [("input", {"action": "move", **at()})]
    if kind == "scroll":
        dx, dy = _notches(_int(a, "scroll_x")), _notches(_int(a, "scroll_y"))
        return [] if dx == dy == 0 else [("input", {"action": "scroll", **at(), "dx": dx, "dy": dy})]
    if kind == "type":
        return _typing(_str(a, "text"))
    if kind == "keypress":
        keys = a.get("keys")
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise ComputerToolError('"keys" must be an array of key names', keys=keys)
        return [("input", {"action": "key", "keys": c}) for c in to_combos(keys, True)]
    if kind == "drag":
        path = a.get("path")
        if not isinstance(path, list) or len(path) < 2:
            raise ComputerToolError('"path" must list at least two points', path=path)
        points = [{"x": _int(_input(p), "x", 0), "y": _int(_input(p), "y", 0)} for p in path]
        if len(points) == 2:
            to = points[1]
            return [("input", {"action": "drag", **points[0], "to_x": to["x"], "to_y": to["y"]})]
        # A longer path is pressed at its first point, moved through the others, released last.
        return [
            ("input", {"action": "mouse_down", **points[0]}),
            *[("input", {"action": "move", **p}) for p in points[1:-1]],
            ("input", {"action": "mouse_up", **points[-1]}),
        ]
    raise ComputerToolError(f'unknown computer action "{kind}"', type=kind)


def describe_result(what: str, result: Dict[str, Any]) -> str:
    """describe_result is one line a model can read: what Cubicle could say about the action."""
    effect = result.get("effect")
    if effect == "confirmed":
        return f"{what}: delivered, and the screen changed (effect: confirmed)."
    if effect == "unverifiable":
        return f"{what}: delivered; no visible change was seen (effect: unverifiable)."
    if effect == "suspected_noop":
        return f"{what}: delivered, but nothing seems to have changed (effect: suspected_noop)."
    if effect == "partial":
        d = result.get("delivery", {})
        done, asked = d.get("delivered_count"), d.get("requested_count")
        return f"{what}: only {done} of {asked} went through (effect: partial)."
    error = result.get("error", {})
    return f"{what}: not delivered, {error.get('code')}: {error.get('hint')}"
