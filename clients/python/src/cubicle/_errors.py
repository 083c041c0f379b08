"""Typed errors: one class per kind of failure, each carrying the API's envelope fields.

The API answers every failure with `{"error": {"code", "message", "details"?, "request_id"}}`;
from_response parses it back into the class that matches its status, so callers catch
`cubicle.NotFoundError` and read `.code`, `.request_id` and `.details` without touching JSON.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import httpx


class CubicleError(Exception):
    """CubicleError is the base of every error the SDK raises."""

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: Optional[int] = None,
        request_id: Optional[str] = None,
        details: Optional[Dict[str, Any]] = None,
    ):
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.request_id = request_id
        self.details: Dict[str, Any] = details or {}

    def __str__(self) -> str:
        where = f", request_id={self.request_id}" if self.request_id else ""
        return f"{self.code}: {self.message} (status={self.status}{where})"


class APIConnectionError(CubicleError):
    """The request did not get an answer (refused, reset, dropped) after every retry."""


class APITimeoutError(APIConnectionError):
    """No answer within the client's timeout, after every retry."""


class APIStatusError(CubicleError):
    """The API answered with an error status; `code` is its stable error code."""


class BadRequestError(APIStatusError):
    """400: `validation_failed`, `invalid_id`, `invalid_json` (details name the fields)."""


class AuthenticationError(APIStatusError):
    """401 `unauthenticated`: the key is missing, unknown or revoked."""


class PermissionDeniedError(APIStatusError):
    """403 `forbidden`: the key's role may not do this."""


class NotFoundError(APIStatusError):
    """404: unknown ids, including other tenants' ids."""


class ConflictError(APIStatusError):
    """409: e.g. `claim_not_active`, `idempotency_key_reused`."""


class PayloadTooLargeError(APIStatusError):
    """413 `payload_too_large`."""


class RateLimitError(APIStatusError):
    """429 `rate_limited` or `quota_exceeded`; `retry_after` is the API's Retry-After (seconds)."""

    retry_after: Optional[float] = None


class InternalServerError(APIStatusError):
    """5xx: the body never carries internal messages; quote `request_id` when reporting it."""


_BY_STATUS = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    429: RateLimitError,
}


def retry_after_seconds(response: httpx.Response) -> Optional[float]:
    """retry_after_seconds reads Retry-After as seconds (the API sends an integer); None if absent."""
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def from_response(response: httpx.Response) -> APIStatusError:
    """from_response builds the typed error for an error answer, envelope or not."""
    body: Dict[str, Any] = {}
    try:
        parsed = response.json()
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            body = parsed["error"]
    except ValueError:
        pass
    status = response.status_code
    cls = _BY_STATUS.get(status, InternalServerError if status >= 500 else APIStatusError)
    error = cls(
        str(body.get("message") or f"HTTP {status}"),
        code=str(body.get("code") or f"http_{status}"),
        status=status,
        request_id=body.get("request_id") or response.headers.get("x-request-id"),
        details=body.get("details") if isinstance(body.get("details"), dict) else None,
    )
    if isinstance(error, RateLimitError):
        error.retry_after = retry_after_seconds(response)
    return error
