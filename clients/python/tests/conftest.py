"""Fixtures for the suite: the live Cubicle started by scripts/lib/python-tests.mjs (real
Postgres, Redis, worker with local desktops, API), its keys, a warm pool and a fault proxy."""

from __future__ import annotations

import os
import time
from typing import Iterator
from urllib.parse import urlparse

import httpx
import pytest

from cubicle import Cubicle, RetryPolicy

from .fault_proxy import FaultProxy

# The quick start in the README claims from `default`: the suite's pool has that name.
POOL = "default"


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"{name} is not set: run `node scripts/cubicle.mjs test-python`")
    return value


@pytest.fixture(scope="session")
def endpoint() -> str:
    return _env("CUBICLE_TEST_ENDPOINT")


@pytest.fixture(scope="session")
def admin_key() -> str:
    return _env("CUBICLE_TEST_ADMIN_KEY")


@pytest.fixture(scope="session")
def keys() -> dict:
    return {
        "member": _env("CUBICLE_TEST_MEMBER_KEY"),
        "revoked": _env("CUBICLE_TEST_REVOKED_KEY"),
        "other_tenant": _env("CUBICLE_TEST_OTHER_TENANT_KEY"),
        "rate_limited": _env("CUBICLE_TEST_RATE_LIMITED_KEY"),
    }


@pytest.fixture
def cubicle(endpoint: str, admin_key: str) -> Iterator[Cubicle]:
    with Cubicle(api_key=admin_key, base_url=endpoint) as client:
        yield client


@pytest.fixture(scope="session")
def pool(endpoint: str, admin_key: str) -> Iterator[str]:
    """A pool of local desktops, one kept warm, drained at the end of the session."""
    with Cubicle(api_key=admin_key, base_url=endpoint) as client:
        # The quick start applies the same spec, so it changes nothing (no warm desktop rolls).
        client.pools.apply(POOL, image="local", autoscaling={"min": 1, "initial": 1, "max": 2})
        deadline = time.monotonic() + 300
        while client.pools.get(POOL)["counts"]["warm"] < 1:
            assert time.monotonic() < deadline, "no warm desktop within 300 s"
            time.sleep(0.5)
        yield POOL
        client.pools.delete(POOL)


@pytest.fixture
def proxy(endpoint: str) -> Iterator[FaultProxy]:
    target = urlparse(endpoint)
    fault_proxy = FaultProxy((target.hostname or "127.0.0.1", target.port or 80))
    yield fault_proxy
    fault_proxy.close()


# One connection per request through the proxy, so each request meets the fault armed for it.
NO_KEEPALIVE = httpx.Limits(max_keepalive_connections=0)
FAST_RETRY = RetryPolicy(max_retries=4, base_delay=0.05, max_delay=0.5)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
