"""AsyncClaim: one claim and the drive calls of its desktop (files, windows, tickets, secrets, runs).

Written once for asyncio; its synchronous twin (the same name with _sync) is generated from
this file by scripts/generate.py (`await` and `async` dropped, class names lose their prefix). A line ending in
`# sync: <text>` becomes <text> there.
"""

from __future__ import annotations

import json

# fmt: off
from typing import Any, AsyncIterator, Dict, Generator, List, Optional, Sequence, cast  # sync: from typing import Any, Iterator, Dict, List, Optional, Sequence, cast
# fmt: on

from typing_extensions import Unpack

from ._compat import async_sleep
from ._models import Claim as ClaimModel
from ._models import (
    CreateViewerTicketRequest,
    GuestActionResult,
    GuestElementActionRequest,
    GuestFileDeleteResponse,
    GuestFileListResponse,
    GuestFileReadResponse,
    GuestFileStat,
    GuestFileWriteResponse,
    GuestObserveRequest,
    GuestObserveResponse,
    GuestPixelActionRequest,
    GuestScreenshotImage,
    GuestScreenshotRequest,
    GuestShellRunResult,
    GuestVerifyStateRequest,
    GuestVerifyStateResponse,
    GuestWindowLaunchResponse,
    GuestWindowListResponse,
    Handoff,
    HandoffCreated,
    Run,
    SecretRef,
    ViewerTicket,
    ViewerTicketCreated,
)
from ._computer_tool_async import create_computer_tool
from ._sse import SSEDecoder
from ._transport_async import AsyncTransport


class AsyncClaimCreation:  # sync: drop-class
    """The answer of claims.create: await it for the claim, or `async with` it to release on exit."""  # sync: drop-class

    def __init__(self, pending: Any):  # sync: drop-class
        self._pending = pending  # sync: drop-class
        self._claim: Optional[AsyncClaim] = None  # sync: drop-class

    def __await__(self) -> Generator[Any, None, AsyncClaim]:  # sync: drop-class
        return self._pending.__await__()  # sync: drop-class

    async def __aenter__(self) -> AsyncClaim:  # sync: drop-class
        self._claim = await self._pending  # sync: drop-class
        return self._claim  # sync: drop-class

    async def __aexit__(self, *exc: Any) -> None:  # sync: drop-class
        if self._claim is not None:  # sync: drop-class
            await self._claim.release()  # sync: drop-class


class AsyncClaim:
    """AsyncClaim is one claim and its desktop's drive calls; `data` is the Claim as last read."""

    def __init__(self, transport: AsyncTransport, data: ClaimModel):
        self._t = transport
        self.data = data
        self.id: str = data["id"]
        self.files = AsyncClaimFiles(transport, self.id)
        self.windows = AsyncClaimWindows(transport, self.id)
        self.viewer_tickets = AsyncClaimViewerTickets(transport, self.id)
        self.secrets = AsyncClaimSecrets(transport, self.id)
        self.runs = AsyncClaimRuns(transport, self.id)

    def __repr__(self) -> str:
        return f"<Claim {self.id} {self.data.get('status')}>"

    async def __aenter__(self) -> AsyncClaim:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.release()

    def _call(self, operation_id: str, body: Any = None) -> Any:
        return self._t.request(operation_id, path={"id": self.id}, body=body)

    async def refresh(self) -> ClaimModel:
        self.data = await self._call("getClaim")
        return self.data

    async def heartbeat(self) -> ClaimModel:
        self.data = await self._call("heartbeatClaim")
        return self.data

    async def extend(self, ttl_seconds: int) -> ClaimModel:
        self.data = await self._call("updateClaim", {"ttl_seconds": ttl_seconds})
        return self.data

    async def release(self) -> ClaimModel:
        self.data = await self._call("releaseClaim")
        return self.data

    async def observe(self, **request: Unpack[GuestObserveRequest]) -> GuestObserveResponse:
        return cast(GuestObserveResponse, await self._call("observeClaim", request))

    async def act(self, **request: Unpack[GuestElementActionRequest]) -> GuestActionResult:
        return cast(GuestActionResult, await self._call("actClaim", request))

    async def input(self, **request: Unpack[GuestPixelActionRequest]) -> GuestActionResult:
        return cast(GuestActionResult, await self._call("inputClaim", request))

    async def verify(self, **request: Unpack[GuestVerifyStateRequest]) -> GuestVerifyStateResponse:
        return cast(GuestVerifyStateResponse, await self._call("verifyClaim", request))

    async def screenshot(
        self, *, window_id: Optional[int] = None, max_dimension: Optional[int] = None
    ) -> bytes:
        """screenshot: the screen, or one window, as PNG bytes (TypeScript: `claim.screenshot()`)."""
        return cast(
            bytes,
            await self._t.request(
                "getClaimScreenshot",
                path={"id": self.id},
                query={"window_id": window_id, "max_dimension": max_dimension},
                is_raw=True,
            ),
        )

    async def screenshot_image(self, **request: Unpack[GuestScreenshotRequest]) -> GuestScreenshotImage:
        """screenshot_image: base64 data with its `screenshot_id` and pixel mapping, which `input`
        refers to (TypeScript: `claim.screenshotImage()`)."""
        return cast(GuestScreenshotImage, await self._call("screenshotClaim", request))

    async def computer_tool(self, kind: str, **options: Any) -> Any:
        """computer_tool: a computer-use tool on this desktop, "anthropic" (the `computer` tool)
        or "openai" (computer-use actions): `.definition` for the model, `.execute(input)` to run
        its calls. Options: max_dimension (default 1280), version (Anthropic), screenshot_after_action."""
        return await create_computer_tool(self, kind, **options)

    async def shell(
        self, command: Optional[str] = None, *, argv: Optional[Sequence[str]] = None, **options: Any
    ) -> GuestShellRunResult:
        """shell runs `command` with sh -c, or `argv` as is; options: cwd, env, timeout_ms, stdin."""
        request: Dict[str, Any] = dict(options)
        if argv is not None:
            request["argv"] = list(argv)
        else:
            request["command"] = command
        return cast(GuestShellRunResult, await self._call("runClaimShell", request))

    async def actions(self, *, limit: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        async for action in self._t.pages("listClaimActions", path={"id": self.id}, query={"limit": limit}):
            yield action

    async def action_screenshot(self, screenshot_id: str) -> bytes:
        """A kept window screenshot (PNG bytes) an action quoted; 404 when none was kept."""
        return cast(
            bytes,
            await self._t.request(
                "getClaimActionScreenshot",
                path={"id": self.id, "screenshot_id": screenshot_id},
                is_raw=True,
            ),
        )

    async def request_handoff(
        self, reason: str, *, for_: Optional[str] = None, ttl_seconds: Optional[int] = None
    ) -> HandoffCreated:
        """Hand the desktop to a human (a login, a CAPTCHA, a decision the agent must not take):
        until it comes back, this claim's driving calls raise `handoff_active` (409). The answer's
        `control["viewer_url"]` (shown once) is where the human takes over; `wait_for_handoff`
        waits for the return and its note."""
        body: Dict[str, Any] = {"reason": reason}
        if for_ is not None:
            body["for"] = for_
        if ttl_seconds is not None:
            body["ttl_seconds"] = ttl_seconds
        return cast(HandoffCreated, await self._call("requestHandoff", body))

    async def return_handoff(self, handoff_id: str, *, note: Optional[str] = None) -> Handoff:
        """Give the desktop back to the agent with a note (the human's side)."""
        body = {} if note is None else {"note": note}
        path = {"id": self.id, "handoff_id": handoff_id}
        return cast(Handoff, await self._t.request("returnHandoff", path=path, body=body))

    async def handoff(self, handoff_id: str) -> Handoff:
        """One handoff: its state, and the human's note once returned."""
        path = {"id": self.id, "handoff_id": handoff_id}
        return cast(Handoff, await self._t.request("getHandoff", path=path))

    async def handoffs(
        self, *, state: Optional[str] = None, limit: Optional[int] = None
    ) -> AsyncIterator[Handoff]:
        """The claim's handoffs, newest first (`state="active"` for the one in progress)."""
        query = {"state": state, "limit": limit}
        async for handoff in self._t.pages("listHandoffs", path={"id": self.id}, query=query):
            yield handoff

    async def wait_for_handoff(self, handoff_id: str, *, interval: float = 1.0) -> Handoff:
        """Poll a handoff until it is no longer active (returned, lease expired, claim ended)."""
        while True:
            handoff = await self.handoff(handoff_id)
            if handoff["state"] != "active":
                return handoff
            await async_sleep(interval)

    async def egress(self) -> Dict[str, Any]:
        """The claim's egress policy as it applies now (the pool's, narrowed by the claim)."""
        return cast(Dict[str, Any], await self._call("getClaimEgress"))

    async def egress_events(self, *, limit: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        """The claim's egress events (denied connections), newest first."""
        async for event in self._t.pages("listEgressEvents", path={"id": self.id}, query={"limit": limit}):
            yield event

    async def egress_event_stream(self) -> AsyncIterator[Dict[str, Any]]:
        """The claim's egress events live (Server-Sent Events), as they are reported."""
        decoder = SSEDecoder()
        async for line in self._t.stream_lines(
            "streamEgressEvents", path={"id": self.id}, headers={"accept": "text/event-stream"}
        ):
            event = decoder.decode(line)
            if event is not None and event.data:
                yield cast(Dict[str, Any], json.loads(event.data))

    async def mcp_token(self, **options: Any) -> Dict[str, Any]:
        """Mint a claim-scoped MCP token (`mcp_url` and `token`, shown once)."""
        return cast(Dict[str, Any], await self._call("createMcpToken", options))

    async def mcp_tokens(self, *, limit: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        """The claim's MCP tokens (never the token strings)."""
        async for token in self._t.pages("listMcpTokens", path={"id": self.id}, query={"limit": limit}):
            yield token

    async def revoke_mcp_token(self, token_id: str) -> None:
        """Stop an MCP token at once."""
        await self._t.request("revokeMcpToken", path={"token_id": token_id})

    async def pause(self) -> ClaimModel:
        """Freeze the desktop (no CPU while paused; paused time counts toward the hard maximum, not
        the idle timeout). Any driving call resumes it; Pods answer 409 not_supported_by_backend."""
        self.data = await self._call("pauseClaim")
        return self.data

    async def resume(self) -> ClaimModel:
        """Thaw a paused claim (a no-op on a running one)."""
        self.data = await self._call("resumeClaim")
        return self.data

    async def save_profile(self) -> Dict[str, Any]:
        """Save the claim's profile now (changed files only), as release also does."""
        return cast(Dict[str, Any], await self._call("saveClaimProfile"))

    async def snapshot(self, **options: Any) -> Dict[str, Any]:
        """Store the claim's home (or `paths` in it); fork it with `claims.fork(pool, snapshot_id)`."""
        return cast(Dict[str, Any], await self._call("createSnapshot", options))

    async def recording(self) -> Dict[str, Any]:
        """The claim's video: state, segments, duration, size and its URLs."""
        return cast(Dict[str, Any], await self._call("getClaimRecording"))

    async def recording_media(self) -> bytes:
        """The whole video so far (fragmented MP4 bytes)."""
        return cast(bytes, await self._t.request("getClaimRecordingMedia", path={"id": self.id}, is_raw=True))

    async def timeline(self, *, limit: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        """The claim's steps, runs, viewers and lifecycle on the video's clock, oldest first."""
        async for entry in self._t.pages("getClaimTimeline", path={"id": self.id}, query={"limit": limit}):
            yield entry

    async def replay_link(self, ttl_seconds: int) -> Dict[str, Any]:
        """Mint an expiring, revocable, read-only link to the claim's replay (shown once)."""
        return cast(Dict[str, Any], await self._call("createReplayLink", {"ttl_seconds": ttl_seconds}))

    async def replay_links(self, *, limit: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        """The claim's replay links (never the link tokens)."""
        async for link in self._t.pages("listReplayLinks", path={"id": self.id}, query={"limit": limit}):
            yield link

    async def revoke_replay_link(self, link_id: str) -> None:
        """Stop a replay link at once."""
        await self._t.request("revokeReplayLink", path={"link_id": link_id})

    async def viewer_connections(self, *, limit: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        """The claim's viewer streams (connected, disconnected, close reason), oldest first."""
        async for connection in self._t.pages(
            "listClaimViewerConnections", path={"id": self.id}, query={"limit": limit}
        ):
            yield connection


class AsyncClaimFiles:
    def __init__(self, transport: AsyncTransport, claim_id: str):
        self._t, self._id = transport, claim_id

    async def read(self, path: str, **options: Any) -> GuestFileReadResponse:
        return cast(
            GuestFileReadResponse,
            await self._t.request("readClaimFile", path={"id": self._id}, body={"path": path, **options}),
        )

    async def write(self, path: str, content: str, **options: Any) -> GuestFileWriteResponse:
        body = {"path": path, "content": content, **options}
        return cast(
            GuestFileWriteResponse, await self._t.request("writeClaimFile", path={"id": self._id}, body=body)
        )

    async def list(self, path: str, **options: Any) -> GuestFileListResponse:
        return cast(
            GuestFileListResponse,
            await self._t.request("listClaimFiles", path={"id": self._id}, body={"path": path, **options}),
        )

    async def stat(self, path: str) -> GuestFileStat:
        return cast(
            GuestFileStat, await self._t.request("statClaimFile", path={"id": self._id}, body={"path": path})
        )

    async def delete(self, path: str, **options: Any) -> GuestFileDeleteResponse:
        return cast(
            GuestFileDeleteResponse,
            await self._t.request("deleteClaimFile", path={"id": self._id}, body={"path": path, **options}),
        )


class AsyncClaimWindows:
    def __init__(self, transport: AsyncTransport, claim_id: str):
        self._t, self._id = transport, claim_id

    async def list(self) -> GuestWindowListResponse:
        return cast(GuestWindowListResponse, await self._t.request("listClaimWindows", path={"id": self._id}))

    async def launch(self, argv: Sequence[str], **options: Any) -> GuestWindowLaunchResponse:
        body = {"argv": list(argv), **options}
        return cast(
            GuestWindowLaunchResponse,
            await self._t.request("launchClaimWindow", path={"id": self._id}, body=body),
        )

    async def close(self, window_id: int, **options: Any) -> GuestActionResult:
        body = {"window_id": window_id, **options}
        return cast(
            GuestActionResult, await self._t.request("closeClaimWindow", path={"id": self._id}, body=body)
        )


class AsyncClaimViewerTickets:
    def __init__(self, transport: AsyncTransport, claim_id: str):
        self._t, self._id = transport, claim_id

    async def create(self, **request: Unpack[CreateViewerTicketRequest]) -> ViewerTicketCreated:
        """create mints a live-view ticket: `viewer_url` and `embed_html` (mode view or control)."""
        return cast(
            ViewerTicketCreated,
            await self._t.request("createViewerTicket", path={"id": self._id}, body=request),
        )

    async def list(self, *, limit: Optional[int] = None) -> AsyncIterator[ViewerTicket]:
        async for ticket in self._t.pages("listViewerTickets", path={"id": self._id}, query={"limit": limit}):
            yield ticket


class AsyncClaimSecrets:
    def __init__(self, transport: AsyncTransport, claim_id: str):
        self._t, self._id = transport, claim_id

    async def create(self, name: str, value: str) -> SecretRef:
        body = {"name": name, "value": value}
        return cast(SecretRef, await self._t.request("createSecret", path={"id": self._id}, body=body))

    async def list(self) -> List[SecretRef]:
        return cast(List[SecretRef], (await self._t.request("listSecrets", path={"id": self._id}))["data"])

    async def delete(self, secret_id: str) -> None:
        await self._t.request("deleteSecret", path={"id": self._id, "secret_id": secret_id})


class AsyncClaimRuns:
    def __init__(self, transport: AsyncTransport, claim_id: str):
        self._t, self._id = transport, claim_id

    async def create(
        self, argv: Sequence[str], *, idempotency_key: Optional[str] = None, **options: Any
    ) -> Run:
        """create starts `argv` (no shell) in the desktop: cwd, env, secrets, timeout_seconds."""
        body = {"argv": list(argv), **options}
        return cast(
            Run,
            await self._t.request(
                "createRun", path={"id": self._id}, body=body, idempotency_key=idempotency_key
            ),
        )

    async def list(self, *, limit: Optional[int] = None) -> AsyncIterator[Run]:
        async for run in self._t.pages("listClaimRuns", path={"id": self._id}, query={"limit": limit}):
            yield run
