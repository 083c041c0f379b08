"""Error answers of the live API become typed errors with code, request_id and details."""

from __future__ import annotations

import httpx
import pytest

from cubicle import (
    AuthenticationError,
    BadRequestError,
    Cubicle,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
)
from cubicle._errors import from_response


def test_unknown_claim_is_not_found_with_request_id(cubicle):
    with pytest.raises(NotFoundError) as raised:
        cubicle.claims.get("clm_00000000000000000000000000")
    error = raised.value
    assert error.status == 404 and error.code == "not_found"
    assert error.request_id and error.request_id in str(error)


def test_invalid_pool_spec_names_the_field(cubicle):
    with pytest.raises(BadRequestError) as raised:
        cubicle.pools.apply("bad-pool", image="local", autoscaling={"min": 2, "initial": 1, "max": 5})
    assert raised.value.code == "validation_failed"
    assert "autoscaling" in str(raised.value.details) or "autoscaling" in raised.value.message
    with pytest.raises(NotFoundError):
        cubicle.pools.get("bad-pool")  # the refusal changed nothing


def test_malformed_id_is_invalid_id(cubicle):
    with pytest.raises(BadRequestError) as raised:
        cubicle.claims.get("not-a-claim")
    assert raised.value.code == "invalid_id"


def test_revoked_key_is_unauthenticated(endpoint, keys):
    with Cubicle(api_key=keys["revoked"], base_url=endpoint) as c:
        with pytest.raises(AuthenticationError) as raised:
            c.pools.get("default")
    assert raised.value.code == "unauthenticated"


def test_member_key_cannot_write_stored_secrets(endpoint, keys):
    with Cubicle(api_key=keys["member"], base_url=endpoint) as c:
        with pytest.raises(PermissionDeniedError) as raised:
            c.secrets.stored.put("SDK_TEST", "value")
    assert raised.value.code == "forbidden"


def test_other_tenants_claim_is_not_found(pool, cubicle, endpoint, keys):
    with cubicle.claims.create(pool, ttl_seconds=60) as claim:
        with Cubicle(api_key=keys["other_tenant"], base_url=endpoint) as other:
            with pytest.raises(NotFoundError):
                other.claims.get(claim.id)
            with pytest.raises(NotFoundError):
                other.claims.release(claim.id)
        assert claim.refresh()["status"] == "active"


def test_envelope_parsing_without_a_server():
    request = httpx.Request("GET", "http://127.0.0.1/v1/pools")
    limited = httpx.Response(
        429,
        headers={"retry-after": "7"},
        json={
            "error": {
                "code": "rate_limited",
                "message": "slow down",
                "request_id": "req-1",
                "details": {"limit": 1},
            }
        },
        request=request,
    )
    error = from_response(limited)
    assert isinstance(error, RateLimitError)
    assert (error.code, error.request_id, error.details, error.retry_after) == (
        "rate_limited",
        "req-1",
        {"limit": 1},
        7.0,
    )
    # A proxy's HTML 502 still becomes a typed error, with the request id from the header.
    bare = httpx.Response(
        502, headers={"x-request-id": "req-2"}, text="<html>bad gateway</html>", request=request
    )
    error = from_response(bare)
    assert isinstance(error, InternalServerError) and error.code == "http_502" and error.request_id == "req-2"
