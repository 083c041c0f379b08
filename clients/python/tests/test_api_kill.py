"""The API is killed (SIGKILL) while it handles a claim, then started again: the client's
retries, with the key it kept, end with one claim, never two. Whether the kill lands before or
after the claim's commit is up to the scheduler; both must give one claim."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
import uuid
from typing import Iterator

import httpx
import pytest

from cubicle import Cubicle, RetryPolicy

from .conftest import NO_KEEPALIVE, _env
from .fault_proxy import FaultProxy


class ApiProcess:
    """One more API process of the live stack (same database, Redis, keyring) on its own port."""

    def __init__(self, port: int):
        self.port = port
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "DATABASE_URL": _env("CUBICLE_TEST_DATABASE_URL"),
            "REDIS_URL": _env("CUBICLE_TEST_REDIS_URL"),
            "CUBICLE_KEYRING": _env("CUBICLE_TEST_KEYRING"),
            "LOG_LEVEL": "warn",
            "API_HOST": "127.0.0.1",
            "API_PORT": str(self.port),
        }
        command = [_env("CUBICLE_TEST_NODE"), _env("CUBICLE_TEST_API_MAIN")]
        self.process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert self.process.poll() is None, "the extra API exited"
            assert time.monotonic() < deadline, "the extra API did not answer within 60 s"
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL, by pid, and wait for the exit."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def extra_api() -> Iterator[ApiProcess]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    api = ApiProcess(port)
    api.start()
    yield api
    api.kill()


def test_api_killed_mid_claim_gives_one_claim(pool, extra_api, cubicle, admin_key):
    proxy = FaultProxy(("127.0.0.1", extra_api.port))
    restarted = threading.Event()

    def kill_and_restart() -> None:
        extra_api.kill()
        # The client retries (connection refused) while the API starts again.
        threading.Thread(target=lambda: (extra_api.start(), restarted.set()), daemon=True).start()

    fault = proxy.arm(f"POST /v1/pools/{pool}/claims".encode(), "then", action=kill_and_restart)
    tag = uuid.uuid4().hex
    retries = []
    try:
        with Cubicle(
            api_key=admin_key,
            base_url=proxy.url,
            retry=RetryPolicy(max_retries=40, base_delay=0.2, max_delay=1.0),
            http_client=httpx.Client(limits=NO_KEEPALIVE, timeout=60),
            on_retry=lambda *a: retries.append(a),
        ) as through_proxy:
            with through_proxy.claims.create(pool, ttl_seconds=120, metadata={"tag": tag}) as claim:
                assert fault.hits == 1 and restarted.wait(60)
                assert retries, "the killed request was retried"
                tagged = [c["id"] for c in cubicle.claims.list(pool=pool) if c["metadata"].get("tag") == tag]
                assert tagged == [claim.id]
    finally:
        proxy.close()
