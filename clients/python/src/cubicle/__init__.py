"""Cubicle's Python SDK: claim Linux desktops from warm pools and drive them.

    from cubicle import Cubicle
    with Cubicle() as cubicle:  # $CUBICLE_API_KEY, $CUBICLE_URL (or api_key=, base_url=)
        with cubicle.claims.create("default") as claim:  # released on exit
            print(claim.shell("uname -a")["stdout"])

`AsyncCubicle` is the same surface with `await` / `async with` / `async for`. Requests are
logged (redacted: no keys, headers or bodies) to the `logging` logger "cubicle" at DEBUG;
`verify_webhook` checks a webhook delivery's signature.
"""

from ._claim_async import AsyncClaim
from ._claim_sync import Claim
from ._client_async import AsyncCubicle
from ._client_sync import Cubicle
from ._computer_tool import ComputerToolError
from ._computer_tool_async import AsyncAnthropicComputerTool, AsyncOpenAIComputerTool
from ._computer_tool_sync import AnthropicComputerTool, OpenAIComputerTool
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
from ._version import __version__
from ._webhooks import WebhookVerificationError, verify_webhook

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AnthropicComputerTool",
    "AsyncAnthropicComputerTool",
    "AsyncClaim",
    "AsyncCubicle",
    "AsyncOpenAIComputerTool",
    "AuthenticationError",
    "BadRequestError",
    "Claim",
    "ComputerToolError",
    "ConflictError",
    "Cubicle",
    "CubicleError",
    "InternalServerError",
    "NotFoundError",
    "OpenAIComputerTool",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitError",
    "RetryPolicy",
    "WebhookVerificationError",
    "__version__",
    "verify_webhook",
]
