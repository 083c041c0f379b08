"""verify_webhook on deliveries signed here with hmac (real deliveries: test_surface.py)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from cubicle import WebhookVerificationError, verify_webhook

KEY = b"a fixed 32-byte key for the tests"
SECRET = "whsec_" + base64.b64encode(KEY).decode()
BODY = json.dumps({"type": "claim.ended", "timestamp": "2026-01-01T00:00:00Z", "data": {}}).encode()
AT = 1_800_000_000


def sign(key: bytes, msg_id: str, ts: int, body: bytes) -> str:
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def headers(signature: str, ts: int = AT) -> dict:
    return {"Webhook-Id": "msg_1", "Webhook-Timestamp": str(ts), "Webhook-Signature": signature}


def code_of(*args, **kwargs) -> str:
    with pytest.raises(WebhookVerificationError) as raised:
        verify_webhook(*args, **kwargs)
    return raised.value.code


def test_a_signed_delivery_returns_its_event_bytes_or_text():
    h = headers(sign(KEY, "msg_1", AT, BODY))
    assert verify_webhook(BODY, h, SECRET, now=AT) == json.loads(BODY)
    assert verify_webhook(BODY.decode(), h, SECRET, now=AT) == json.loads(BODY)


def test_any_one_of_several_signatures_is_enough():
    old = sign(b"the previous secret", "msg_1", AT, BODY)
    h = headers(f"v2,zzz {old} {sign(KEY, 'msg_1', AT, BODY)}")
    assert verify_webhook(BODY, h, SECRET, now=AT)["type"] == "claim.ended"


def test_tampering_wrong_secret_missing_headers_and_replays_are_refused():
    good = sign(KEY, "msg_1", AT, BODY)
    assert code_of(BODY + b" ", headers(good), SECRET, now=AT) == "bad_signature"
    assert code_of(BODY, {**headers(good), "Webhook-Id": "msg_2"}, SECRET, now=AT) == "bad_signature"
    other = "whsec_" + base64.b64encode(b"another key").decode()
    assert code_of(BODY, headers(good), other, now=AT) == "bad_signature"
    assert code_of(BODY, {"webhook-id": "msg_1"}, SECRET, now=AT) == "missing_header"
    assert code_of(BODY, headers(good), "not-a-secret", now=AT) == "bad_secret"
    assert code_of(BODY, headers(good), SECRET, now=AT + 301) == "bad_timestamp"
    assert verify_webhook(BODY, headers(good), SECRET, now=AT + 301, tolerance_seconds=600)
