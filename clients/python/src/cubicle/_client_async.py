"""AsyncCubicle, the client: one transport shared by every collection.

Written once for asyncio; its synchronous twin (the same name with _sync) is generated from
this file by scripts/generate.py. A line ending in `# sync: <text>` becomes <text> there.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional, cast

import httpx

from ._admin_async import AsyncApiKeys, AsyncAuditEvents, AsyncTenantApi, AsyncUsageApi, AsyncWebhooks
from ._errors import CubicleError
from ._models import Healthz, Version
from ._resources_async import (
    AsyncClaims,
    AsyncPools,
    AsyncProfiles,
    AsyncReplayLinks,
    AsyncRuns,
    AsyncSecrets,
    AsyncSnapshots,
    AsyncViewerTickets,
)
from ._retry import RetryPolicy
from ._transport_async import AsyncTransport

DEFAULT_BASE_URL = "http://127.0.0.1:8080"


class AsyncCubicle:
    """AsyncCubicle is the client: `AsyncCubicle(api_key=..., base_url=...)`, used with `async with`."""  # sync: """Cubicle is the client: `Cubicle(api_key=..., base_url=...)`, used with `with`."""

    def __init__(
        self,
        *,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout: Optional[httpx.Timeout] = None,
        retry: RetryPolicy = RetryPolicy(),
        http_client: Optional[httpx.AsyncClient] = None,
        on_retry: Optional[Callable[[str, int, str, float], None]] = None,
    ):
        """api_key and base_url default to $CUBICLE_API_KEY and $CUBICLE_URL (else port 8080 on
        this machine); timeout to 120 s (10 s to connect). on_retry(operation_id, attempt,
        reason, delay_seconds) sees every retry."""
        key = api_key or os.environ.get("CUBICLE_API_KEY")
        if not key:
            raise CubicleError("an API key is needed: api_key= or $CUBICLE_API_KEY", code="missing_api_key")
        self._wire(
            AsyncTransport(
                api_key=key,
                base_url=base_url or os.environ.get("CUBICLE_URL") or DEFAULT_BASE_URL,
                timeout=timeout,
                retry=retry,
                http_client=http_client,
                on_retry=on_retry,
            )
        )

    def with_options(
        self, *, timeout: Optional[httpx.Timeout] = None, retry: Optional[RetryPolicy] = None
    ) -> AsyncCubicle:
        """with_options: the same client (same connections) with another timeout or retry policy
        for the calls made through it, e.g. `cubicle.with_options(retry=RetryPolicy(max_retries=0))`."""
        clone = object.__new__(type(self))
        clone._wire(self._transport.with_options(timeout=timeout, retry=retry))
        return clone

    def _wire(self, transport: AsyncTransport) -> None:
        self._transport = transport
        self.pools = AsyncPools(self._transport)
        self.claims = AsyncClaims(self._transport)
        self.runs = AsyncRuns(self._transport)
        self.secrets = AsyncSecrets(self._transport)
        self.viewer_tickets = AsyncViewerTickets(self._transport)
        self.tenant = AsyncTenantApi(self._transport)
        self.api_keys = AsyncApiKeys(self._transport)
        self.webhooks = AsyncWebhooks(self._transport)
        self.audit_events = AsyncAuditEvents(self._transport)
        self.usage = AsyncUsageApi(self._transport)
        self.profiles = AsyncProfiles(self._transport)
        self.snapshots = AsyncSnapshots(self._transport)
        self.replay_links = AsyncReplayLinks(self._transport)

    async def health(self) -> Healthz:
        return cast(Healthz, await self._transport.request("getHealthz"))

    async def version(self) -> Version:
        return cast(Version, await self._transport.request("getVersion"))

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> AsyncCubicle:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
