"""The drive calls on a real desktop, as `npm run demo` does over raw HTTP: launch galculator,
find its buttons through observe, press 6 × 7 = by element token, verify the display reads 42."""

from __future__ import annotations

import pytest

from cubicle import AsyncCubicle, CubicleError


def test_calculator_by_element_tokens(pool, cubicle):
    with cubicle.claims.create(pool, ttl_seconds=180, metadata={"purpose": "sdk-drive"}) as claim:
        launched = claim.windows.launch(["galculator"], wait_for_window_ms=20_000)
        assert launched["window"], launched
        window_id = launched["window"]["window_id"]
        ready = claim.verify(
            window_id=window_id,
            predicates=[
                {"kind": "element_exists", "selector": {"role": "toggle_button", "name": "="}, "unique": True}
            ],
            timeout_ms=10_000,
        )
        assert ready["status"] == "satisfied", ready
        snapshot = claim.observe(window_id=window_id)
        tokens = {e["name"]: e["element_token"] for e in snapshot["elements"] if e["role"] == "toggle_button"}
        for name in ("6", "*", "7", "="):
            result = claim.act(window_id=window_id, element_token=tokens[name], action="click")
            assert result["effect"] != "refused", result
        verdict = claim.verify(
            window_id=window_id,
            predicates=[
                {"kind": "element_exists", "selector": {"role": "text", "value": "42"}, "unique": True}
            ],
            stable_samples=2,
            timeout_ms=5_000,
        )
        assert verdict["status"] == "satisfied", verdict
        assert window_id in [w["window_id"] for w in claim.windows.list()["windows"]]
        image = claim.screenshot_image(window_id=window_id)
        assert image["format"] in ("png", "jpeg") and image["width"] > 0
        assert claim.screenshot(window_id=window_id).startswith(b"\x89PNG\r\n\x1a\n")
        recorded = [a["operation"] for a in claim.actions()]
        assert len(recorded) >= 4
        claim.windows.close(window_id)


def test_pending_claim_is_polled_until_active(cubicle):
    """A pool with nothing warm answers 202 pending; create() polls until the desktop is up."""
    cubicle.pools.apply("sdk-cold", image="local", autoscaling={"min": 0, "initial": 0, "max": 1})
    try:
        with cubicle.claims.create("sdk-cold", ttl_seconds=60, wait_seconds=0, pending_timeout=240) as claim:
            assert claim.data["status"] == "active" and claim.data["sandbox"] is not None
        # Given no time to wait, a pending claim is released, not left queued.
        with pytest.raises(CubicleError) as raised:
            cubicle.claims.create("sdk-cold", ttl_seconds=60, wait_seconds=0, pending_timeout=0)
        assert raised.value.code == "claim_pending_timeout"
        pending = [c for c in cubicle.claims.list(pool="sdk-cold", status="pending")]
        assert pending == []
    finally:
        cubicle.pools.delete("sdk-cold")


@pytest.mark.anyio
async def test_awaiting_create_returns_the_claim(pool, endpoint, admin_key):
    async with AsyncCubicle(api_key=admin_key, base_url=endpoint) as cubicle:
        claim = await cubicle.claims.create(pool, ttl_seconds=60)
        try:
            assert (await claim.heartbeat())["status"] == "active"
        finally:
            assert (await claim.release())["status"] == "released"
