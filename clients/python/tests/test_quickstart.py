"""The README's Python quick start, run as written against the live Cubicle, then the same
flow with the async client."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cubicle import AsyncCubicle, Cubicle

README = Path(__file__).resolve().parents[3] / "README.md"


def quick_start() -> str:
    """The first ```python block after the README's "Python SDK" heading."""
    text = README.read_text()
    heading = text.index("### Python SDK")
    match = re.search(r"```python\n(.*?)```", text[heading:], re.S)
    assert match, "README: no ```python block under ### Python SDK"
    return match.group(1)


def test_readme_quick_start_runs_as_written(pool, endpoint, admin_key, monkeypatch, capsys):
    monkeypatch.setenv("CUBICLE_API_KEY", admin_key)
    monkeypatch.setenv("CUBICLE_URL", endpoint)
    exec(compile(quick_start(), "README.md (Python quick start)", "exec"), {})
    out = capsys.readouterr().out
    claim_id = re.search(r"^(clm_\w+) hello from the desktop$", out, re.M)
    assert claim_id, out
    assert re.search(r"^watch: http://\S+", out, re.M), out
    assert re.search(r"^\d+ stdout .*step 2", out, re.M), out
    # The `with` block released the claim on its way out.
    with Cubicle(api_key=admin_key, base_url=endpoint) as cubicle:
        claim = cubicle.claims.get(claim_id.group(1))
        assert claim.data["status"] == "released"
        assert claim.data["release_reason"] is not None


@pytest.mark.anyio
async def test_async_client_same_flow(pool, endpoint, admin_key):
    async with AsyncCubicle(api_key=admin_key, base_url=endpoint) as cubicle:
        async with cubicle.claims.create(pool, ttl_seconds=300, metadata={"suite": "async"}) as claim:
            assert claim.data["status"] == "active"
            result = await claim.shell(argv=["sh", "-c", "echo async-$((6*7))"])
            assert result["exit_code"] == 0 and result["stdout"].strip() == "async-42"
            png = await claim.screenshot()
            assert png.startswith(b"\x89PNG\r\n\x1a\n")
            written = await claim.files.write("/tmp/cubicle-sdk.txt", "from python")
            assert written is not None
            read = await claim.files.read("/tmp/cubicle-sdk.txt")
            assert read["content"] == "from python"
            listed = [c["id"] async for c in cubicle.claims.list(pool=pool, status="active")]
            assert claim.id in listed
        after = await cubicle.claims.get(claim.id)
        assert after.data["status"] == "released"


def test_pagination_walks_every_page(pool, cubicle):
    """claims.list(limit=1) pages one claim at a time; the iterator reads every page."""
    ids = []
    for _ in range(3):
        claim = cubicle.claims.create(pool, ttl_seconds=60, metadata={"suite": "pages"})
        ids.append(claim.id)
        claim.release()
    seen = [c["id"] for c in cubicle.claims.list(pool=pool, limit=1)]
    assert set(ids) <= set(seen)
    assert len(seen) == len(set(seen)), "a claim came twice"
