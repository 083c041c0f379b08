"""A claim's MCP endpoint driven by the official Python MCP client (`mcp`): mint a claim-scoped
MCP token, list the tools, compute 6 × 7 in galculator by element tokens and read the display
back; a tool failure is an MCPError carrying the stable error code; a revoked token is refused."""

from __future__ import annotations

import anyio
import httpx
import httpx2
import pytest

from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

TOOLS = {
    "screenshot",
    "observe",
    "act",
    "input",
    "verify",
    "shell",
    "files_read",
    "files_write",
    "files_list",
    "windows_list",
    "windows_launch",
    "wait_for",
    "request_handoff",
}


def _mint(endpoint: str, admin_key: str, claim_id: str, **body) -> dict:
    # Raw HTTP: the generated SDK learns mcp-tokens when it is regenerated from the document.
    response = httpx.post(
        f"{endpoint}/v1/claims/{claim_id}/mcp-tokens",
        json={"ttl_seconds": 600, **body},
        headers={"authorization": f"Bearer {admin_key}"},
    )
    assert response.status_code == 201, response.text
    return response.json()


def _client(url: str, bearer: str) -> Client:
    # The transport takes its headers from the HTTP client it is given (httpx2, which mcp uses).
    http = httpx2.AsyncClient(
        headers={"authorization": f"Bearer {bearer}"}, timeout=httpx2.Timeout(30, read=150)
    )
    return Client(streamable_http_client(url, http_client=http))


async def _drive(url: str, token: str, home: str) -> None:
    async with _client(url, token) as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS

        async def call(name: str, arguments: dict) -> dict:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, result
            return result.structured_content

        launched = await call(
            "windows_launch", {"argv": ["galculator"], "env": {"HOME": home}, "wait_for_window_ms": 20_000}
        )
        window_id = launched["window"]["window_id"]
        ready = await call(
            "wait_for",
            {
                "until": "element",
                "window_id": window_id,
                "selector": {"role": "toggle_button", "name": "="},
                "timeout_ms": 10_000,
            },
        )
        assert ready["satisfied"], ready
        observed = await call("observe", {"window_id": window_id, "include_screenshot": False})
        tokens = {
            e["name"]: e["element_token"] for e in observed["elements"] if e["role"] == "toggle_button"
        }
        for key in ("6", "*", "7", "="):
            acted = await call("act", {"window_id": window_id, "element_token": tokens[key], "action": "click"})
            # The ActionResult is the structured content.
            assert {"effect", "evidence", "retry_safe"} <= acted.keys(), acted
            assert acted["effect"] != "refused", acted
        verdict = await call(
            "verify",
            {
                "window_id": window_id,
                "predicates": [
                    {"kind": "element_exists", "selector": {"role": "text", "value": "42"}, "unique": True}
                ],
                "stable_samples": 2,
                "timeout_ms": 5_000,
            },
        )
        assert verdict["status"] == "satisfied", verdict

        shot = await client.call_tool("screenshot", {"window_id": window_id, "max_dimension": 200})
        images = [c for c in shot.content if c.type == "image"]
        assert images and images[0].mime_type == "image/png"
        assert max(shot.structured_content["width"], shot.structured_content["height"]) <= 200

        with pytest.raises(MCPError) as raised:
            await client.call_tool("act", {"window_id": 999_999, "element_token": "s1:1", "action": "click"})
        assert raised.value.data["code"] in ("window_not_found", "stale_element_token", "stale_snapshot")
        with pytest.raises(MCPError) as invalid:
            await client.call_tool("act", {"action": "fly"})
        assert invalid.value.code == -32602 and invalid.value.data["code"] == "validation_failed"


def test_mcp_client_drives_a_claim(pool, cubicle, endpoint, admin_key):
    with cubicle.claims.create(pool, ttl_seconds=180, metadata={"purpose": "sdk-mcp"}) as claim:
        claim_id = claim.data["id"]
        minted = _mint(endpoint, admin_key, claim_id)
        assert minted["mcp_url"].endswith(f"/v1/claims/{claim_id}/mcp")
        url = f"{endpoint}/v1/claims/{claim_id}/mcp"
        anyio.run(_drive, url, minted["token"], f"/tmp/sdk-mcp-{claim_id}")

        httpx.delete(
            f"{endpoint}/v1/mcp-tokens/{minted['id']}", headers={"authorization": f"Bearer {admin_key}"}
        ).raise_for_status()

        # The refusal is an HTTP 401 with the error envelope, before any MCP message is read...
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        raw = httpx.post(
            url,
            json=initialize,
            headers={
                "authorization": f"Bearer {minted['token']}",
                "accept": "application/json, text/event-stream",
            },
        )
        assert raw.status_code == 401, raw.text
        assert raw.json()["error"]["code"] == "unauthenticated"
        assert raw.json()["error"]["details"]["state"] == "revoked"

        # ...and the MCP client gives up on it (it reports an HTTP refusal as an MCPError).
        async def refused() -> None:
            async with _client(url, minted["token"]) as client:
                await client.list_tools()

        with pytest.raises(Exception) as raised:
            anyio.run(refused)
        assert "MCPError" in repr(raised.value), raised.value
