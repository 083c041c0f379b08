"""The computer-use tools: the committed transcripts (one copy, in the TypeScript SDK's test
fixtures, written by hand from the vendors' docs) replayed through `claim.computer_tool(...)` on a
test app in a real desktop, each step's effect read back from the app through observe; and the
mapping's refusals, which need no desktop."""

from __future__ import annotations

import base64
import json
import re
import struct
import time
import zlib
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

from cubicle import Claim, ComputerToolError, Cubicle
from cubicle._computer_tool import anthropic_plan, openai_plan, to_combos, xdotool_combos

FIXTURES = Path(__file__).resolve().parents[3] / "packages/sdk/test/fixtures/computer-use"
APP_PATH = "/tmp/cu-test-app.py"


def _fixture(name: str) -> Dict[str, Any]:
    return json.loads((FIXTURES / name).read_text())


def _png(data: str) -> Dict[str, Any]:
    """_png reads a PNG's size and its centre pixel (8-bit RGB or RGBA, any row filter)."""
    raw = base64.b64decode(data)
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 3
    while pos < len(raw):
        (length,) = struct.unpack(">I", raw[pos : pos + 4])
        kind, body = raw[pos + 4 : pos + 8], raw[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
            channels = {2: 3, 6: 4}[body[9]]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    rows, stride, prev = zlib.decompress(idat), width * channels, bytearray(width * channels)
    centre = None
    for y in range(height):
        f, line = rows[y * (stride + 1)], bytearray(rows[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            p = a + b - c
            paeth = a if abs(p - a) <= min(abs(p - b), abs(p - c)) else (b if abs(p - b) <= abs(p - c) else c)
            pred = [0, a, b, (a + b) // 2, paeth][f]
            line[i] = (line[i] + pred) & 0xFF
        if y == height // 2:
            x = (width // 2) * channels
            centre = list(line[x : x + 3])
        prev = line
    return {"width": width, "height": height, "centre": centre}


def test_the_mapping_refuses_what_it_cannot_send() -> None:
    assert xdotool_combos("ctrl+a Delete") == ["ctrl+a", "Delete"]
    assert to_combos(["CTRL", "A"], True) == ["ctrl+a"]
    assert to_combos(["SHIFT"], True) == ["Shift_L"]
    assert anthropic_plan({"action": "triple_click", "coordinate": [3, 4]}, False) == [
        ("input", {"action": "click", "count": 3, "x": 3, "y": 4}, False)
    ]
    assert openai_plan({"type": "scroll", "x": 1, "y": 2, "scroll_x": 0, "scroll_y": -250}) == [
        ("input", {"action": "scroll", "x": 1, "y": 2, "dx": 0, "dy": -2})
    ]
    bad_inputs = (
        {"action": "fly"},
        {"action": "left_click", "coordinate": [1]},
        {"action": "zoom", "region": [0, 0, 5, 5]},
        "screenshot",
    )
    for bad in bad_inputs:
        with pytest.raises(ComputerToolError) as caught:
            anthropic_plan(bad, False)
        assert caught.value.code == "invalid_tool_action"
    with pytest.raises(ComputerToolError):
        openai_plan({"type": "drag", "path": [{"x": 1, "y": 1}]})


@pytest.fixture(scope="module")
def desktop(endpoint: str, admin_key: str, pool: str) -> Iterator[Claim]:
    with Cubicle(api_key=admin_key, base_url=endpoint) as client:
        with client.claims.create(pool, ttl_seconds=900) as claim:
            claim.files.write(APP_PATH, (FIXTURES / "test-app.py").read_text())
            yield claim


def _labels(claim: Claim, window_id: int) -> Dict[str, str]:
    seen = claim.observe(window_id=window_id, include_screenshot=False)
    labels = {}
    for row in seen["elements"]:
        m = re.match(r"^(\w+): (.*)$", row.get("name") or "", re.S) if row["role"] == "label" else None
        if m:
            labels[m.group(1)] = m.group(2)
    return labels


def _matches(value: Any, want: Any) -> bool:
    if isinstance(want, str):
        return value == want
    return value is not None and want.get("min", -1e18) <= float(value) <= want.get("max", 1e18)


def _expect_app(claim: Claim, window_id: int, want: Dict[str, Any], step: str) -> None:
    deadline = time.monotonic() + 5
    while True:
        labels = _labels(claim, window_id)
        if all(_matches(labels.get(k), v) for k, v in want.items()) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for k, v in want.items():
        assert _matches(labels.get(k), v), f"{step}: label {k} is {labels.get(k)!r}"


def _launch(claim: Claim) -> int:
    for w in claim.windows.list()["windows"]:
        if w["title"] == "cu-test-app":
            claim.windows.close(w["window_id"])
    launched = claim.windows.launch(["/usr/bin/python3", APP_PATH], wait_for_window_ms=20_000)
    assert launched["window_wait"] == "found"
    window_id = launched["window"]["window_id"]
    deadline = time.monotonic() + 10
    while _labels(claim, window_id).get("clicks") != "-":
        assert time.monotonic() < deadline, "the test app did not show its labels"
        time.sleep(0.1)
    return window_id


# Delivered input is "confirmed" when the screen changed within the guest's short watch (300 ms),
# else "unverifiable"; a slow repaint on a loaded machine can miss the watch, so each step asserts
# delivery and reads the effect back from the app, and most steps must confirm.
DELIVERED = ("confirmed", "unverifiable")


def _expect_mostly_confirmed(effects: list) -> None:
    assert sum(e == "confirmed" for e in effects) > len(effects) / 2, effects


def _check_image(data: str, want: Dict[str, Any], step: str) -> None:
    png = _png(data)
    assert (png["width"], png["height"]) == (want["width"], want["height"]), step
    if "center_rgb" in want:
        assert png["centre"] == want["center_rgb"], step


@pytest.mark.live
def test_anthropic_transcript_has_its_effects(desktop: Claim) -> None:
    fixture = _fixture("anthropic.json")
    window_id = _launch(desktop)
    effects: list = []
    tool = desktop.computer_tool(
        "anthropic", max_dimension=fixture["max_dimension"], version=fixture["version"]
    )
    assert tool.definition == fixture["definition"]
    for step in fixture["steps"]:
        tool_input, want, name = step["input"], step["expect"], json.dumps(step["input"])
        if "error" in want:
            with pytest.raises(ComputerToolError) as caught:
                tool.execute(tool_input)
            assert caught.value.code == want["error"], name
            continue
        out = tool.execute(tool_input)
        assert out["is_error"] is False, name
        images = [c for c in out["content"] if c["type"] == "image"]
        texts = [c["text"] for c in out["content"] if c["type"] == "text"]
        if "image" in want:
            _check_image(images[0]["source"]["data"], want["image"], name)
        if "text" in want:
            assert texts == [want["text"]], name
        if want.get("delivered"):
            effect = out["action_results"][-1]["effect"]
            assert effect in DELIVERED, name
            effects.append(effect)
            assert "delivered" in texts[0] and f"(effect: {effect})" in texts[0], name
        if "app" in want:
            _expect_app(desktop, window_id, want["app"], name)
    _expect_mostly_confirmed(effects)


@pytest.mark.live
def test_openai_actions_have_their_effects(desktop: Claim) -> None:
    fixture = _fixture("openai.json")
    window_id = _launch(desktop)
    effects: list = []
    tool = desktop.computer_tool("openai", max_dimension=fixture["max_dimension"])
    assert tool.definition == fixture["definition"]
    for step in fixture["steps"]:
        action, want, name = step["input"], step["expect"], json.dumps(step["input"])
        if "error" in want:
            with pytest.raises(ComputerToolError) as caught:
                tool.execute(action)
            assert caught.value.code == want["error"], name
            continue
        out = tool.execute(action)
        assert out["output"]["type"] == "computer_screenshot", name
        data = out["output"]["image_url"].removeprefix("data:image/png;base64,")
        _check_image(data, want.get("image", {"width": 1280, "height": 800}), name)
        if want.get("delivered"):
            assert out["action_results"], name
            assert all(r["effect"] in DELIVERED for r in out["action_results"]), name
            effects.extend(r["effect"] for r in out["action_results"])
        if "app" in want:
            _expect_app(desktop, window_id, want["app"], name)
    _expect_mostly_confirmed(effects)
    batch = tool.execute_call(
        {"call_id": "call_1", "actions": [{"type": "click", "x": 140, "y": 70}] * 2}
    )
    assert batch["item"]["type"] == "computer_call_output" and batch["item"]["call_id"] == "call_1"
    assert [r["effect"] in DELIVERED for r in batch["action_results"]] == [True, True]
    _expect_app(desktop, window_id, {"clicks": "3"}, "batched clicks")
