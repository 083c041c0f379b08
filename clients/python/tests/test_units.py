"""Pure parts: the SSE decoder and the retry policy's rules."""

from __future__ import annotations

from cubicle._retry import RetryPolicy, is_retryable_status, wait_before_retry
from cubicle._sse import SSEDecoder


def test_sse_decoder_reads_frames_and_skips_keepalives():
    decoder = SSEDecoder()
    lines = [": keepalive", "", "id: 3", "event: stdout", 'data: {"seq":3}', "", "event: end", "data: {}", ""]
    events = [e for e in (decoder.decode(line) for line in lines) if e is not None]
    assert [(e.id, e.event, e.data) for e in events] == [("3", "stdout", '{"seq":3}'), (None, "end", "{}")]


def test_retry_statuses():
    assert all(is_retryable_status("getPool", s) for s in (429, 502, 503, 504))
    assert not any(is_retryable_status("getPool", s) for s in (400, 401, 403, 404, 409, 413, 500))
    # A click is retried only when refused before any work.
    assert is_retryable_status("actClaim", 429)
    assert not any(is_retryable_status("actClaim", s) for s in (502, 503, 504))


def test_backoff_is_jittered_and_capped():
    policy = RetryPolicy(max_retries=10, base_delay=0.5, max_delay=2.0)
    delays = [policy.delay(attempt, None) for attempt in range(10)]
    assert all(d is not None and 0 <= d <= 2.0 for d in delays)
    assert len(set(delays)) > 1
    assert policy.delay(10, None) is None  # the budget is spent
    assert 5 <= policy.delay(0, 5.0) <= 5.5  # Retry-After is the floor
    assert policy.delay(0, 600.0) is None  # longer than max_retry_after: raised to the caller


def test_which_error_answers_are_retried():
    policy = RetryPolicy(base_delay=0.01)

    def wait(op, status, code, after=None):
        return wait_before_retry(policy, op, 0, status, code, after)

    assert wait("createClaim", 409, "idempotency_in_progress") is not None  # the API's "retry later"
    assert wait("createClaim", 409, "idempotency_key_reused") is None
    assert wait("createClaim", 429, "rate_limited", 2.0) >= 2.0
    assert wait("createClaim", 429, "quota_exceeded") is None  # waiting frees no quota
    assert wait("createClaim", 429, "quota_exceeded", 5.0) >= 5.0  # unless the API says when
    assert wait("actClaim", 429, "rate_limited", 1.0) is not None
    assert wait("actClaim", 504, "timeout") is None
    assert wait("getPool", 502, "backend_unavailable") is not None
    assert wait("getPool", 404, "not_found") is None
