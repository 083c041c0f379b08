"""Cubicle's Python SDK: claim Linux desktops from warm pools and drive them.

    from cubicle import Cubicle
    with Cubicle(api_key="...", base_url="http://127.0.0.1:8080") as cubicle:
        with cubicle.claims.create("default") as claim:  # released on exit
            print(claim.shell("uname -a")["stdout"])

`AsyncCubicle` is the same surface with `await` / `async with` / `async for`.
"""

from ._claim_async import AsyncClaim
from ._claim_sync import Claim
from ._client_async import AsyncCubicle
from ._client_sync import Cubicle
from ._errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    CubicleError,
    InternalServerError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
)
from ._retry import RetryPolicy

__version__ = "0.1.0"

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AsyncClaim",
    "AsyncCubicle",
    "AuthenticationError",
    "BadRequestError",
    "Claim",
    "ConflictError",
    "Cubicle",
    "CubicleError",
    "InternalServerError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitError",
    "RetryPolicy",
]
