"""runs.events(): the live event stream of a run, resumed with Last-Event-ID after the
connection drops, each event exactly once and in seq order."""

from __future__ import annotations

import httpx
import pytest

from cubicle import AsyncCubicle, Cubicle

from .conftest import FAST_RETRY, NO_KEEPALIVE

SCRIPT = "for i in 1 2 3 4 5 6 7 8; do echo line $i; sleep 0.2; done"


def _check(events: list, run_id: str) -> None:
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(seqs) + 1)), seqs
    assert all(e["run_id"] == run_id for e in events)
    text = "".join(str(e["data"]) for e in events if e["type"] == "stdout")
    for i in range(1, 9):
        assert f"line {i}" in text
    assert events[-1]["type"] == "status" and events[-1]["data"].get("status") == "succeeded", events[-1]


def test_events_resume_after_dropped_streams(pool, proxy, cubicle, admin_key):
    # Two drops: one early in the replay, one while the run is live.
    first = proxy.arm(b"GET /v1/runs/", "cut_stream", after_events=2)
    second = proxy.arm(b"GET /v1/runs/", "cut_stream", after_events=2)
    retries = []
    with cubicle.claims.create(pool, ttl_seconds=120) as claim:
        run = claim.runs.create(["sh", "-c", SCRIPT])
        with Cubicle(
            api_key=admin_key,
            base_url=proxy.url,
            retry=FAST_RETRY,
            http_client=httpx.Client(limits=NO_KEEPALIVE, timeout=60),
            on_retry=lambda *a: retries.append(a),
        ) as through_proxy:
            events = list(through_proxy.runs.events(run["id"]))
        assert first.hits == 1 and second.hits == 1
        assert len([r for r in retries if r[0] == "streamRunEvents"]) >= 2
        _check(events, run["id"])
        assert events[-1]["seq"] == cubicle.runs.get(run["id"])["last_seq"]


def test_events_from_a_seq_skip_what_the_reader_has(pool, cubicle):
    with cubicle.claims.create(pool, ttl_seconds=120) as claim:
        run = claim.runs.create(["sh", "-c", "echo a; echo b"])
        everything = list(cubicle.runs.events(run["id"]))
        later = list(cubicle.runs.events(run["id"], after_seq=2))
    assert [e["seq"] for e in later] == [e["seq"] for e in everything[2:]]


@pytest.mark.anyio
async def test_async_events_resume(pool, proxy, endpoint, admin_key):
    proxy.arm(b"GET /v1/runs/", "cut_stream", after_events=3)
    async with AsyncCubicle(api_key=admin_key, base_url=endpoint) as cubicle:
        async with cubicle.claims.create(pool, ttl_seconds=120) as claim:
            run = await claim.runs.create(["sh", "-c", SCRIPT])
            async with AsyncCubicle(
                api_key=admin_key,
                base_url=proxy.url,
                retry=FAST_RETRY,
                http_client=httpx.AsyncClient(limits=NO_KEEPALIVE, timeout=60),
            ) as through_proxy:
                events = [e async for e in through_proxy.runs.events(run["id"])]
            _check(events, run["id"])
