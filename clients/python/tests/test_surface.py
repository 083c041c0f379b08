"""The rest of the surface against the live API, one call each at least: a method whose path,
body or answer shape were wrong fails here."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import http.server
import json
import queue
import threading
import uuid

import pytest

from cubicle import ConflictError, NotFoundError, WebhookVerificationError, verify_webhook


def test_health_version_and_tenant(cubicle):
    assert cubicle.health()["status"]
    assert cubicle.version()
    tenant = cubicle.tenant.get()
    assert tenant["id"].startswith("ten_")
    updated = cubicle.tenant.update(embed_origins=["https://agents.example.com"])
    assert updated["embed_origins"] == ["https://agents.example.com"]
    cubicle.tenant.update(embed_origins=[])


def test_api_keys_create_list_revoke(cubicle):
    created = cubicle.api_keys.create(f"sdk-{uuid.uuid4().hex[:8]}", "member")
    assert created["key"]
    assert created["id"] in [k["id"] for k in cubicle.api_keys.list()]
    cubicle.api_keys.revoke(created["id"])
    listed = {k["id"]: k for k in cubicle.api_keys.list()}
    assert created["id"] not in listed or listed[created["id"]]["revoked_at"] is not None


class Receiver(http.server.BaseHTTPRequestHandler):
    """A webhook endpoint on a loopback port that keeps what it was sent."""

    received: "queue.Queue[tuple[dict, bytes]]" = queue.Queue()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        self.received.put(({k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def test_webhooks_round_trip_and_a_signed_delivery(pool, cubicle):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/hook"
    try:
        hook = cubicle.webhooks.create(url, ["claim.ended"], description="sdk")
        assert hook["secret"].startswith("whsec_")
        assert cubicle.webhooks.get(hook["id"])["url"] == url
        assert hook["id"] in [h["id"] for h in cubicle.webhooks.list()]
        assert cubicle.webhooks.update(hook["id"], description="changed")["description"] == "changed"
        with cubicle.claims.create(pool, ttl_seconds=60) as claim:
            pass
        # Other claims of the suite may end meanwhile: wait for this one's event.
        while True:
            headers, body = Receiver.received.get(timeout=30)
            event = json.loads(body)
            if event["data"]["claim_id"] == claim.id:
                break
        assert event["type"] == "claim.ended"
        key = base64.b64decode(hook["secret"].removeprefix("whsec_"))
        signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
        expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        assert expected in headers["webhook-signature"].split()
        # The SDK's own check agrees on the real delivery, and refuses it altered or replayed.
        assert verify_webhook(body, headers, hook["secret"]) == event
        with pytest.raises(WebhookVerificationError) as tampered:
            verify_webhook(body + b" ", headers, hook["secret"])
        assert tampered.value.code == "bad_signature"
        with pytest.raises(WebhookVerificationError) as replayed:
            verify_webhook(body, headers, hook["secret"], now=int(headers["webhook-timestamp"]) + 301)
        assert replayed.value.code == "bad_timestamp"
        deliveries = list(cubicle.webhooks.deliveries(hook["id"]))
        assert deliveries and deliveries[0]["event_type"] == "claim.ended"
        rotated = cubicle.webhooks.rotate_secret(hook["id"])
        assert rotated["secret"] != hook["secret"]
        cubicle.webhooks.delete(hook["id"])
        with pytest.raises(NotFoundError):
            cubicle.webhooks.get(hook["id"])
    finally:
        server.shutdown()


def test_stored_secrets_are_write_only(cubicle):
    name = f"SDK_{uuid.uuid4().hex[:8].upper()}"
    first = cubicle.secrets.stored.create(name, "one")
    second = cubicle.secrets.stored.put(name, "two")
    assert second["version"] > first["version"]
    listed = {s["name"]: s for s in cubicle.secrets.stored.list()}
    assert name in listed and "value" not in listed[name]
    cubicle.secrets.stored.delete(name)
    assert name not in [s["name"] for s in cubicle.secrets.stored.list()]


def test_audit_events_and_usage(pool, cubicle):
    events = []
    for event in cubicle.audit_events.list(limit=5):
        events.append(event)
        if len(events) == 7:  # more than one page of 5
            break
    assert len(events) == 7
    now = dt.datetime.now(dt.timezone.utc)
    usage = cubicle.usage.get(from_=(now - dt.timedelta(hours=1)).isoformat(), to=now.isoformat())
    assert "totals" in usage
    insights = cubicle.usage.pool_insights(pool, window="hour")
    assert insights["pool"] == pool


def test_claim_secrets_tickets_and_runs(pool, cubicle):
    with cubicle.claims.create(pool, ttl_seconds=120) as claim:
        ref = cubicle.secrets.create(claim.id, "SDK_TOKEN", "s3cret-value")
        assert [s["name"] for s in claim.secrets.list()] == ["SDK_TOKEN"]
        shown = claim.shell(command='cat "$CUBICLE_SECRETS_DIR/SDK_TOKEN"')
        assert shown["stdout"] == "s3cret-value"
        cubicle.secrets.delete(claim.id, ref["id"])
        assert cubicle.secrets.list(claim.id) == []

        ticket = cubicle.viewer_tickets.create(claim.id, mode="view", ttl_seconds=60)
        assert cubicle.viewer_tickets.introspect(ticket["ticket"])["state"] == "active"
        assert ticket["id"] in [t["id"] for t in cubicle.viewer_tickets.list(claim.id)]
        cubicle.viewer_tickets.revoke(ticket["id"])
        assert cubicle.viewer_tickets.introspect(ticket["ticket"])["state"] != "active"

        run = claim.runs.create(["sh", "-c", "read line; echo got $line"], idempotency_key="sdk-stdin-run")
        assert (
            claim.runs.create(["sh", "-c", "read line; echo got $line"], idempotency_key="sdk-stdin-run")[
                "id"
            ]
            == run["id"]
        )
        with pytest.raises(ConflictError) as raised:
            claim.runs.create(["true"], idempotency_key="sdk-stdin-run")
        assert raised.value.code == "idempotency_key_reused"
        cubicle.runs.stdin(run["id"], "hello\n", eof=True)
        events = list(cubicle.runs.events(run["id"]))
        assert any("got hello" in str(e["data"]) for e in events if e["type"] == "stdout")
        page = cubicle.runs.event_page(run["id"], after_seq=0)
        assert page["complete"] and [e["seq"] for e in page["data"]] == [e["seq"] for e in events]
        assert run["id"] in [r["id"] for r in cubicle.runs.list(claim.id)]

        sleeper = cubicle.runs.create(claim.id, ["sleep", "30"])
        cubicle.runs.cancel(sleeper["id"], grace_seconds=1)
        list(cubicle.runs.events(sleeper["id"]))
        assert cubicle.runs.get(sleeper["id"])["end_reason"] == "cancelled"

        assert claim.heartbeat()["status"] == "active"
        assert claim.extend(240)["ttl_seconds"] == 240
        windows = claim.windows.list()
        assert "windows" in windows
        assert isinstance(
            claim.observe(window_id=windows["windows"][0]["window_id"]) if windows["windows"] else {}, dict
        )
