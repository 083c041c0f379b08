"""Retries against the live API: a claim whose answer was lost is retried with the same
Idempotency-Key (one claim, not two); a real 429 waits for Retry-After; other 4xx never retry."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest

from cubicle import APIConnectionError, AsyncCubicle, Cubicle, NotFoundError, RetryPolicy

from .conftest import FAST_RETRY, NO_KEEPALIVE


def _claims_tagged(cubicle: Cubicle, pool: str, tag: str) -> list:
    return [c for c in cubicle.claims.list(pool=pool) if c["metadata"].get("tag") == tag]


def test_dropped_answer_is_retried_into_the_same_claim(pool, proxy, cubicle, admin_key):
    fault = proxy.arm(f"POST /v1/pools/{pool}/claims".encode(), "drop_answer")
    retries = []
    tag = uuid.uuid4().hex
    with Cubicle(
        api_key=admin_key,
        base_url=proxy.url,
        retry=FAST_RETRY,
        http_client=httpx.Client(limits=NO_KEEPALIVE, timeout=60),
        on_retry=lambda *a: retries.append(a),
    ) as through_proxy:
        with through_proxy.claims.create(pool, ttl_seconds=120, metadata={"tag": tag}) as claim:
            # The first attempt reached the API and made a claim; its answer never came back.
            assert fault.hits == 1 and b"HTTP/1.1 20" in fault.answer
            dropped = json.loads(fault.answer.partition(b"\r\n\r\n")[2])
            assert claim.id == dropped["id"]
            assert [r[0] for r in retries] == ["createClaim"]
            assert len(_claims_tagged(cubicle, pool, tag)) == 1


def test_without_the_kept_key_the_same_fault_makes_two_claims(pool, proxy, cubicle, endpoint, admin_key):
    """The control experiment: the same fault and a naive retry (a new key) leave two claims,
    so the test above proves the kept key, not a quiet proxy."""
    proxy.arm(f"POST /v1/pools/{pool}/claims".encode(), "drop_answer")
    tag = uuid.uuid4().hex
    body = {"ttl_seconds": 60, "metadata": {"tag": tag}}
    headers = {"authorization": f"Bearer {admin_key}"}
    with httpx.Client(limits=NO_KEEPALIVE, timeout=60) as http:
        with pytest.raises(httpx.RemoteProtocolError):
            http.post(
                f"{proxy.url}/v1/pools/{pool}/claims",
                json=body,
                headers={**headers, "idempotency-key": str(uuid.uuid4())},
            )
        http.post(
            f"{proxy.url}/v1/pools/{pool}/claims",
            json=body,
            headers={**headers, "idempotency-key": str(uuid.uuid4())},
        )
    tagged = _claims_tagged(cubicle, pool, tag)
    assert len(tagged) == 2
    for c in tagged:
        cubicle.claims.release(c["id"])


def test_replay_unsafe_call_is_not_retried_after_a_dropped_answer(pool, proxy, cubicle, admin_key):
    """A shell command whose answer was lost may have run: it surfaces instead of running twice."""
    with cubicle.claims.create(pool, ttl_seconds=120) as claim:
        proxy.arm(f"POST /v1/claims/{claim.id}/shell".encode(), "drop_answer")
        with Cubicle(
            api_key=admin_key,
            base_url=proxy.url,
            retry=FAST_RETRY,
            http_client=httpx.Client(limits=NO_KEEPALIVE, timeout=60),
        ) as through_proxy:
            handle = through_proxy.claims.get(claim.id)
            with pytest.raises(APIConnectionError):
                handle.shell("echo once >> /tmp/cubicle-once.txt")
        assert claim.files.read("/tmp/cubicle-once.txt")["content"] == "once\n"


def test_refused_connection_is_retried_then_raised():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    retries = []
    with Cubicle(
        api_key="unused",
        base_url=f"http://127.0.0.1:{port}",
        retry=RetryPolicy(max_retries=2, base_delay=0.01),
        on_retry=lambda *a: retries.append(a),
    ) as c:
        with pytest.raises(APIConnectionError) as raised:
            c.pools.get("anything")
    assert raised.value.code == "connection_error"
    assert len(retries) == 2


def test_other_4xx_is_never_retried(endpoint, admin_key):
    retries = []
    with Cubicle(api_key=admin_key, base_url=endpoint, on_retry=lambda *a: retries.append(a)) as c:
        with pytest.raises(NotFoundError):
            c.pools.get("no-such-pool")
    assert retries == []


def test_429_is_retried_after_retry_after(endpoint, keys):
    """The rate-limited tenant may make one request a minute: the second meets a real 429 and
    succeeds once its Retry-After (the rest of the minute) has passed."""
    retries = []
    # The limiter counts per wall-clock minute: both requests must fall in the same one.
    if time.time() % 60 > 55:
        time.sleep(60.5 - time.time() % 60)
    with Cubicle(
        api_key=keys["rate_limited"], base_url=endpoint, on_retry=lambda *a: retries.append(a)
    ) as limited:
        assert list(limited.pools.list()) == []  # the minute's one request
        assert retries == []
        started = time.monotonic()
        pools = list(limited.pools.list())
        waited = time.monotonic() - started
    assert pools == []
    assert len(retries) >= 1 and retries[0][2] == "HTTP 429"
    retry_after = retries[0][3]
    assert retry_after >= 1
    assert waited >= retry_after


@pytest.mark.anyio
async def test_async_client_keeps_the_key_across_retries(pool, proxy, cubicle, admin_key):
    fault = proxy.arm(f"POST /v1/pools/{pool}/claims".encode(), "drop_answer")
    tag = uuid.uuid4().hex
    async with AsyncCubicle(
        api_key=admin_key,
        base_url=proxy.url,
        retry=FAST_RETRY,
        http_client=httpx.AsyncClient(limits=NO_KEEPALIVE, timeout=60),
    ) as through_proxy:
        async with through_proxy.claims.create(pool, ttl_seconds=120, metadata={"tag": tag}) as claim:
            assert fault.hits == 1
            assert claim.id == json.loads(fault.answer.partition(b"\r\n\r\n")[2])["id"]
    assert len(_claims_tagged(cubicle, pool, tag)) == 1


def test_silent_server_times_out_after_retries():
    """A listener that accepts and never answers: each attempt ends at the timeout, then
    APITimeoutError; with_options changes the policy for the calls made through it."""
    import socket

    from cubicle import APITimeoutError

    with socket.create_server(("127.0.0.1", 0)) as silent:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        retries = []
        with Cubicle(
            api_key="unused",
            base_url=url,
            timeout=httpx.Timeout(0.3),
            retry=RetryPolicy(max_retries=1, base_delay=0.01),
            on_retry=lambda *a: retries.append(a),
        ) as c:
            started = time.monotonic()
            with pytest.raises(APITimeoutError):
                c.pools.get("anything")
            assert time.monotonic() - started >= 0.6  # two attempts of 0.3 s
            assert [r[2] for r in retries] == ["ReadTimeout"]
            retries.clear()
            with pytest.raises(APITimeoutError):
                c.with_options(retry=RetryPolicy(max_retries=0)).pools.get("anything")
            assert retries == []
