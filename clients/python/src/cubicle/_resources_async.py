"""The collections of the client: pools, claims, runs (with the live event stream), viewer
tickets and secrets.

Written once for asyncio; its synchronous twin (the same name with _sync) is generated from
this file by scripts/generate.py (`await` and `async` dropped, class names lose their prefix). A line ending in
`# sync: <text>` becomes <text> there.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Dict, List, Optional, Sequence, cast

import httpx
from typing_extensions import Unpack

from ._claim_async import AsyncClaim, AsyncClaimCreation  # sync: from ._claim_sync import Claim
from ._compat import async_sleep
from ._errors import APIConnectionError, CubicleError
from ._models import Claim as ClaimModel
from ._models import (
    CreateViewerTicketRequest,
    Pool,
    PoolSpec,
    Run,
    RunEvent,
    RunEventPage,
    SecretRef,
    StoredSecret,
    ViewerTicket,
    ViewerTicketCreated,
    ViewerTicketIntrospection,
)
from ._retry import is_retryable_status
from ._sse import SSEDecoder
from ._transport_async import AsyncTransport


class AsyncPools:
    def __init__(self, transport: AsyncTransport):
        self._t = transport

    async def apply(self, name: str, **spec: Unpack[PoolSpec]) -> Pool:
        """apply creates or updates a pool declaratively (the same spec twice changes nothing)."""
        return cast(Pool, await self._t.request("applyPool", path={"name": name}, body=spec))

    async def get(self, name: str) -> Pool:
        return cast(Pool, await self._t.request("getPool", path={"name": name}))

    async def list(self, *, limit: Optional[int] = None) -> AsyncIterator[Pool]:
        async for pool in self._t.pages("listPools", query={"limit": limit}):
            yield pool

    async def delete(self, name: str) -> Pool:
        """delete drains the pool: new claims are refused, live claims run to their end."""
        return cast(Pool, await self._t.request("deletePool", path={"name": name}))


class AsyncClaims:
    def __init__(self, transport: AsyncTransport):
        self._t = transport

    def create(  # sync: def create(
        self,
        pool: str,
        *,
        name: Optional[str] = None,
        ttl_seconds: Optional[int] = None,
        metadata: Optional[Dict[str, str]] = None,
        wait_seconds: Optional[int] = None,
        secrets: Optional[Dict[str, str]] = None,
        stored_secrets: Optional[Sequence[str]] = None,
        profile: Optional[str] = None,
        from_snapshot: Optional[str] = None,
        recording: Optional[Dict[str, Any]] = None,
        idempotency_key: Optional[str] = None,
        pending_timeout: float = 300.0,
    ) -> AsyncClaimCreation:  # sync: ) -> AsyncClaim:
        # create claims a desktop of `pool` and waits until it is active (a 202 pending claim is
        # polled up to `pending_timeout` seconds, then released). As a context manager it releases
        # on exit: `async with cubicle.claims.create("default") as claim:`; or await it.  # sync: # on exit: `with cubicle.claims.create("default") as claim:`; or use the claim it returns.
        body = {
            k: v
            for k, v in dict(
                name=name,
                ttl_seconds=ttl_seconds,
                metadata=metadata,
                wait_seconds=wait_seconds,
                secrets=secrets,
                stored_secrets=list(stored_secrets) if stored_secrets is not None else None,
                profile=profile,
                from_snapshot=from_snapshot,
                recording=recording,
            ).items()
            if v is not None
        }
        # fmt: off
        return AsyncClaimCreation(self._create(pool, body, idempotency_key, pending_timeout))  # sync: return self._create(pool, body, idempotency_key, pending_timeout)
        # fmt: on

    async def _create(
        self, pool: str, body: Dict[str, Any], key: Optional[str], pending_timeout: float
    ) -> AsyncClaim:
        data = await self._t.request("createClaim", path={"name": pool}, body=body, idempotency_key=key)
        claim = AsyncClaim(self._t, data)
        waited = 0.0
        while claim.data["status"] == "pending":
            if waited >= pending_timeout:
                await claim.release()
                raise CubicleError(
                    f"claim {claim.id} stayed pending for {pending_timeout:.0f} s (released)",
                    code="claim_pending_timeout",
                )
            await async_sleep(1.0)
            waited += 1.0
            await claim.refresh()
        return claim

    async def fork(
        self, pool: str, snapshot_id: str, count: int = 1, *, idempotency_key: Optional[str] = None, **body: Any
    ) -> List[AsyncClaim]:  # sync: ) -> List[Claim]:
        """fork claims `count` desktops (1-20) from `pool`, each restored from the snapshot and
        independent of the others; all or none, one Idempotency-Key for the batch."""
        request = {**body, "from_snapshot": snapshot_id, "count": count}
        data = await self._t.request("createClaim", path={"name": pool}, body=request, idempotency_key=idempotency_key)
        return [AsyncClaim(self._t, claim) for claim in data["claims"]]

    async def get(self, claim_id: str) -> AsyncClaim:
        return AsyncClaim(self._t, await self._t.request("getClaim", path={"id": claim_id}))

    async def list(
        self, *, pool: Optional[str] = None, status: Optional[str] = None, limit: Optional[int] = None
    ) -> AsyncIterator[ClaimModel]:
        async for claim in self._t.pages(
            "listClaims", query={"pool": pool, "status": status, "limit": limit}
        ):
            yield claim

    async def heartbeat(self, claim_id: str) -> ClaimModel:
        return cast(ClaimModel, await self._t.request("heartbeatClaim", path={"id": claim_id}))

    async def extend(self, claim_id: str, ttl_seconds: int) -> ClaimModel:
        """extend sets the TTL to `ttl_seconds` from now, capped at the claim's max_expires_at."""
        return cast(
            ClaimModel,
            await self._t.request("updateClaim", path={"id": claim_id}, body={"ttl_seconds": ttl_seconds}),
        )

    async def release(self, claim_id: str) -> ClaimModel:
        """release ends the claim (idempotent); its sandbox is destroyed, never reused."""
        return cast(ClaimModel, await self._t.request("releaseClaim", path={"id": claim_id}))


class AsyncViewerTickets:
    def __init__(self, transport: AsyncTransport):
        self._t = transport

    async def create(
        self, claim_id: str, **request: Unpack[CreateViewerTicketRequest]
    ) -> ViewerTicketCreated:
        """create mints a live-view ticket: `viewer_url` and `embed_html` (mode view or control)."""
        return cast(
            ViewerTicketCreated,
            await self._t.request("createViewerTicket", path={"id": claim_id}, body=request),
        )

    async def list(self, claim_id: str, *, limit: Optional[int] = None) -> AsyncIterator[ViewerTicket]:
        async for ticket in self._t.pages("listViewerTickets", path={"id": claim_id}, query={"limit": limit}):
            yield ticket

    async def revoke(self, ticket_id: str) -> None:
        await self._t.request("revokeViewerTicket", path={"ticket_id": ticket_id})

    async def introspect(self, ticket: str) -> ViewerTicketIntrospection:
        """introspect: the state of a ticket (what the embed page asks; no key needed by the API)."""
        return cast(
            ViewerTicketIntrospection,
            await self._t.request("introspectViewerTicket", body={"ticket": ticket}),
        )


class AsyncSecrets:
    """A claim's secrets (write-only: names, never values); `stored` holds the tenant's."""

    def __init__(self, transport: AsyncTransport):
        self._t = transport
        self.stored = AsyncStoredSecrets(transport)

    async def create(self, claim_id: str, name: str, value: str) -> SecretRef:
        body = {"name": name, "value": value}
        return cast(SecretRef, await self._t.request("createSecret", path={"id": claim_id}, body=body))

    async def list(self, claim_id: str) -> List[SecretRef]:
        return cast(List[SecretRef], (await self._t.request("listSecrets", path={"id": claim_id}))["data"])

    async def delete(self, claim_id: str, secret_id: str) -> None:
        await self._t.request("deleteSecret", path={"id": claim_id, "secret_id": secret_id})


class AsyncStoredSecrets:
    """The tenant's stored secrets (admin keys): versioned and write-only."""

    def __init__(self, transport: AsyncTransport):
        self._t = transport

    async def create(self, name: str, value: str) -> StoredSecret:
        """create adds the first version of a stored secret (`put` adds a version to any)."""
        body = {"name": name, "value": value}
        return cast(StoredSecret, await self._t.request("createStoredSecret", body=body))

    async def put(self, name: str, value: str) -> StoredSecret:
        return cast(
            StoredSecret, await self._t.request("putStoredSecret", path={"name": name}, body={"value": value})
        )

    async def list(self) -> List[StoredSecret]:
        return cast(List[StoredSecret], (await self._t.request("listStoredSecrets"))["data"])

    async def delete(self, name: str) -> None:
        await self._t.request("deleteStoredSecret", path={"name": name})


class AsyncRuns:
    def __init__(self, transport: AsyncTransport):
        self._t = transport

    async def create(
        self, claim_id: str, argv: Sequence[str], *, idempotency_key: Optional[str] = None, **options: Any
    ) -> Run:
        body = {"argv": list(argv), **options}
        return cast(
            Run,
            await self._t.request(
                "createRun", path={"id": claim_id}, body=body, idempotency_key=idempotency_key
            ),
        )

    async def get(self, run_id: str) -> Run:
        return cast(Run, await self._t.request("getRun", path={"run_id": run_id}))

    async def list(self, claim_id: str, *, limit: Optional[int] = None) -> AsyncIterator[Run]:
        async for run in self._t.pages("listClaimRuns", path={"id": claim_id}, query={"limit": limit}):
            yield run

    async def list_all(self, *, status: Optional[str] = None, limit: Optional[int] = None) -> AsyncIterator[Run]:
        """list_all: the tenant's runs across claims, newest first (`status` keeps one state)."""
        async for run in self._t.pages("listRuns", query={"status": status, "limit": limit}):
            yield run

    async def event_page(
        self, run_id: str, *, after_seq: int = 0, limit: Optional[int] = None
    ) -> RunEventPage:
        """event_page: one page of stored events after `after_seq` (`complete` once the run ended)."""
        query = {"after_seq": after_seq, "limit": limit}
        return cast(
            RunEventPage, await self._t.request("listRunEvents", path={"run_id": run_id}, query=query)
        )

    async def stdin(self, run_id: str, data: str, **options: Any) -> Run:
        return cast(
            Run,
            await self._t.request("writeRunStdin", path={"run_id": run_id}, body={"data": data, **options}),
        )

    async def cancel(self, run_id: str, *, grace_seconds: Optional[float] = None) -> Run:
        body = {} if grace_seconds is None else {"grace_seconds": grace_seconds}
        return cast(Run, await self._t.request("cancelRun", path={"run_id": run_id}, body=body))

    async def events(self, run_id: str, *, after_seq: int = 0) -> AsyncIterator[RunEvent]:
        """events yields the run's events in seq order, live, until its final status. A dropped
        stream is reopened with `Last-Event-ID` (backoff + jitter, the retry policy's budget per
        drop), so each event arrives exactly once."""
        last = after_seq
        attempt = 0
        while True:
            decoder = SSEDecoder()
            try:
                async for line in self._t.stream_lines(
                    "streamRunEvents",
                    path={"run_id": run_id},
                    headers={"last-event-id": str(last), "accept": "text/event-stream"},
                ):
                    event = decoder.decode(line)
                    if event is None:
                        continue
                    if event.event == "end":
                        return
                    item = cast(RunEvent, json.loads(event.data))
                    if item["seq"] <= last:
                        continue
                    last = item["seq"]
                    attempt = 0  # progress: the next drop gets the whole budget again
                    yield item
                reason = "stream ended before the run did"
            except httpx.TransportError as error:
                reason = type(error).__name__
            except CubicleError as error:
                if not (error.status is not None and is_retryable_status("streamRunEvents", error.status)):
                    raise
                reason = f"HTTP {error.status}"
            wait = self._t.retry.delay(attempt, None)
            if wait is None:
                raise APIConnectionError(
                    f"run {run_id} events: {reason} (after seq {last})", code="connection_error"
                )
            await self._t.pause("streamRunEvents", attempt, reason, wait)
            attempt += 1


class AsyncProfiles:
    """Per-end-user desktop state, attached with `claims.create(pool, profile=...)`."""

    def __init__(self, transport: AsyncTransport):
        self._t = transport

    async def list(self, *, limit: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        async for profile in self._t.pages("listProfiles", query={"limit": limit}):
            yield profile

    async def get(self, profile_id: str) -> Dict[str, Any]:
        return cast(Dict[str, Any], await self._t.request("getProfile", path={"id": profile_id}))

    async def delete(self, profile_id: str) -> Any:
        """delete removes the profile and its stored objects (409 while a live claim holds it)."""
        return await self._t.request("deleteProfile", path={"id": profile_id})


class AsyncSnapshots:
    """Stored copies of a claim's home, taken with `claim.snapshot()`, forked with `claims.fork`."""

    def __init__(self, transport: AsyncTransport):
        self._t = transport

    async def list(self, *, limit: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        async for snapshot in self._t.pages("listSnapshots", query={"limit": limit}):
            yield snapshot

    async def get(self, snapshot_id: str) -> Dict[str, Any]:
        return cast(Dict[str, Any], await self._t.request("getSnapshot", path={"id": snapshot_id}))

    async def delete(self, snapshot_id: str) -> Any:
        return await self._t.request("deleteSnapshot", path={"id": snapshot_id})


class AsyncReplayLinks:
    def __init__(self, transport: AsyncTransport):
        self._t = transport

    async def introspect(self, token: str) -> Dict[str, Any]:
        """introspect: the state of a replay link (no API key needed: the token is the credential)."""
        return cast(Dict[str, Any], await self._t.request("introspectReplayLink", body={"token": token}))
