"""verify_webhook: check a webhook delivery as the Standard Webhooks scheme signs it."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional, Union

from ._errors import CubicleError

SECRET_PREFIX = "whsec_"
DEFAULT_TOLERANCE_SECONDS = 300


class WebhookVerificationError(CubicleError):
    """A delivery that must not be trusted; ``code`` says why: ``missing_header``,
    ``bad_timestamp``, ``bad_signature``, ``bad_secret`` or ``bad_payload``. Answer 400 and
    do not act on it."""


def verify_webhook(
    payload: Union[str, bytes],
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> Any:
    """verify_webhook checks one delivery and returns the event (the parsed JSON body).

    ``payload`` is the raw request body exactly as received (verify, then parse); ``headers``
    any mapping of the request's headers (names in any case); ``secret`` the endpoint's
    ``whsec_…`` secret. The signature is ``v1,`` + base64 HMAC-SHA256 of
    ``{webhook-id}.{webhook-timestamp}.{payload}``; during a rotation several are sent and any
    one matching is enough. Comparison is constant-time (``hmac.compare_digest``); a timestamp
    more than ``tolerance_seconds`` from now is refused (replays). Raises WebhookVerificationError.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    msg_id = lowered.get("webhook-id")
    timestamp = lowered.get("webhook-timestamp")
    signatures = lowered.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        raise WebhookVerificationError(
            "webhook-id, webhook-timestamp and webhook-signature are all required", code="missing_header"
        )
    if not timestamp.isdigit() or len(timestamp) > 15:
        raise WebhookVerificationError("webhook-timestamp is not a number of seconds", code="bad_timestamp")
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError(
            f"webhook-timestamp is more than {tolerance_seconds} s from now (a replay or a wrong clock)",
            code="bad_timestamp",
        )
    if not secret.startswith(SECRET_PREFIX):
        raise WebhookVerificationError("a webhook secret is whsec_ + base64", code="bad_secret")
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError) as error:
        raise WebhookVerificationError("a webhook secret is whsec_ + base64", code="bad_secret") from error
    body = payload.encode() if isinstance(payload, str) else payload
    expected = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    for entry in signatures.split(" "):
        version, _, value = entry.partition(",")
        if version != "v1" or not value:
            continue
        try:
            given = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            continue
        if hmac.compare_digest(given, expected):
            try:
                return json.loads(body)
            except ValueError as error:
                raise WebhookVerificationError("the signed body is not JSON", code="bad_payload") from error
    raise WebhookVerificationError("no webhook-signature matches the secret", code="bad_signature")
