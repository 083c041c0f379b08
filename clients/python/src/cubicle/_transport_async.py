"""AsyncTransport: sends one operation of the route table with the retry rules of _retry.py.

Written once for asyncio; its synchronous twin (the same name with _sync) is generated from
this file by scripts/generate.py (`await` and `async` dropped, class names lose their prefix). A line ending in
`# sync: <text>` becomes <text> there.
"""

from __future__ import annotations

import copy
import json
import logging
import re
import time
import uuid
from typing import Any, AsyncIterator, Mapping, Optional
from urllib.parse import quote

import httpx

from ._compat import async_sleep
from ._errors import APIConnectionError, APITimeoutError, from_response, retry_after_seconds
from ._operations import OPERATIONS
from ._retry import REPLAY_UNSAFE, RetryPolicy, wait_before_retry
from ._version import USER_AGENT

DEFAULT_TIMEOUT = httpx.Timeout(120.0, connect=10.0)
STREAM_TIMEOUT = httpx.Timeout(10.0, read=60.0)
MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# One DEBUG line per HTTP attempt: `logging.getLogger("cubicle").setLevel(logging.DEBUG)`.
log = logging.getLogger("cubicle")
# Query parameters whose values are credentials somewhere in the API or a proxy before it.
SENSITIVE_QUERY = re.compile(r"^(ticket|token|key|api_key|secret|signature|password)$", re.IGNORECASE)


def _shown_query(params: Mapping[str, Any]) -> str:
    """_shown_query renders the query for a log line with sensitive values hidden."""
    shown = [f"{k}={'[redacted]' if SENSITIVE_QUERY.match(k) else v}" for k, v in params.items()]
    return "?" + "&".join(shown) if shown else ""


def _log_attempt(
    method: str, url: str, params: Mapping[str, Any], attempt: int, started: float, outcome: str
) -> None:
    """_log_attempt logs method, URL, outcome and duration: never headers (the key) or bodies."""
    if log.isEnabledFor(logging.DEBUG):
        elapsed = (time.monotonic() - started) * 1000
        shown = url + _shown_query(params)
        log.debug("%s %s -> %s (%.0f ms, attempt %d)", method, shown, outcome, elapsed, attempt)


class AsyncTransport:
    """AsyncTransport sends one operation with the retry rules of _retry.py."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        timeout: Optional[httpx.Timeout],
        retry: RetryPolicy,
        http_client: Optional[httpx.AsyncClient],
        on_retry: Any,
    ):
        self._http = http_client or httpx.AsyncClient(timeout=timeout or DEFAULT_TIMEOUT)
        self._owns_http = http_client is None
        self._base_url = base_url.rstrip("/")
        self._headers = {"authorization": f"Bearer {api_key}", "user-agent": USER_AGENT}
        # Sent with each request when set; else the httpx client's own timeout applies.
        self.timeout = timeout
        self.retry = retry
        # on_retry(operation_id, attempt, reason, delay_seconds): for logs and tests.
        self._on_retry = on_retry

    def with_options(
        self, *, timeout: Optional[httpx.Timeout], retry: Optional[RetryPolicy]
    ) -> AsyncTransport:
        """with_options: a transport on the same connections (which it does not close)."""
        clone = copy.copy(self)
        clone._owns_http = False
        clone.timeout = timeout if timeout is not None else self.timeout
        clone.retry = retry if retry is not None else self.retry
        return clone

    def url(self, operation_id: str, path: Mapping[str, str]) -> str:
        template = OPERATIONS[operation_id].path
        for name, value in path.items():
            template = template.replace("{" + name + "}", quote(str(value), safe=""))
        return self._base_url + template

    async def request(
        self,
        operation_id: str,
        *,
        path: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        idempotency_key: Optional[str] = None,
        is_raw: bool = False,
    ) -> Any:
        op = OPERATIONS[operation_id]
        headers = dict(self._headers)
        if op.method in MUTATING:
            # One key for this call, kept across its retries: a replay is answered, not redone.
            headers["idempotency-key"] = idempotency_key or str(uuid.uuid4())
        content = None
        if op.has_body:
            headers["content-type"] = "application/json"
            content = json.dumps({} if body is None else body).encode()
        params = {k: v for k, v in (query or {}).items() if v is not None}
        url = self.url(operation_id, path or {})
        attempt = 0
        while True:
            started = time.monotonic()
            try:
                extra = {} if self.timeout is None else {"timeout": self.timeout}
                response = await self._http.request(
                    op.method, url, headers=headers, params=params, content=content, **extra
                )
            except httpx.TransportError as error:
                _log_attempt(op.method, url, params, attempt + 1, started, f"failed: {type(error).__name__}")
                # A refused connection never reached the API; anything later may have.
                reached = not isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout))
                wait = None if reached and operation_id in REPLAY_UNSAFE else self.retry.delay(attempt, None)
                if wait is None:
                    cls = APITimeoutError if isinstance(error, httpx.TimeoutException) else APIConnectionError
                    raise cls(f"{op.method} {op.path}: {error!r}", code="connection_error") from error
                await self.pause(operation_id, attempt, type(error).__name__, wait)
                attempt += 1
                continue
            request_id = response.headers.get("x-request-id")
            outcome = f"{response.status_code}" + (f" request_id={request_id}" if request_id else "")
            _log_attempt(op.method, url, params, attempt + 1, started, outcome)
            if 200 <= response.status_code < 300:
                if is_raw:
                    return response.content
                return response.json() if response.content else None
            error = from_response(response)
            wait = wait_before_retry(
                self.retry,
                operation_id,
                attempt,
                error.status or 0,
                error.code,
                retry_after_seconds(response),
            )
            if wait is None:
                raise error
            await self.pause(operation_id, attempt, f"HTTP {response.status_code}", wait)
            attempt += 1

    async def pause(self, operation_id: str, attempt: int, reason: str, wait: float) -> None:
        if self._on_retry is not None:
            self._on_retry(operation_id, attempt + 1, reason, wait)
        await async_sleep(wait)

    async def pages(
        self,
        operation_id: str,
        *,
        path: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, Any]] = None,
    ) -> AsyncIterator[Any]:
        """pages yields every item of a cursor-paged list, fetching the next page as needed."""
        params = dict(query or {})
        while True:
            page = await self.request(operation_id, path=path, query=params)
            for item in page["data"]:
                yield item
            if not page.get("next_cursor"):
                return
            params["cursor"] = page["next_cursor"]

    async def stream_lines(
        self, operation_id: str, *, path: Mapping[str, str], headers: Mapping[str, str]
    ) -> AsyncIterator[str]:
        """stream_lines opens a streaming GET and yields its lines; errors raise as request does."""
        async with self._http.stream(
            "GET",
            self.url(operation_id, path),
            headers={**self._headers, **headers},
            # The API writes a keep-alive comment every 15 s: a minute of silence is a dead peer.
            timeout=STREAM_TIMEOUT,
        ) as response:
            if response.status_code >= 300:
                await response.aread()
                raise from_response(response)
            async for line in response.aiter_lines():
                yield line

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()
