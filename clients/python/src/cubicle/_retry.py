"""When to try a request again, and how long to wait first.

The rules are the TypeScript SDK's: connection failures, 429 (after Retry-After) and
502/503/504 are retried with exponential backoff and full jitter; any other 4xx never is.
Every mutating call carries one Idempotency-Key across its own attempts, so the API answers a
repeated claim or run with the first one instead of making a second.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Optional

RETRY_STATUSES = frozenset({429, 502, 503, 504})

# Operations whose repetition is not harmless and that the API does not deduplicate by key: a
# second click or keystroke, a second write. They are retried only when they certainly never ran
# (the connection could not be opened, or a 429 refused them before any work); a dropped
# connection or a 502/503/504 mid-call surfaces to the caller instead. As in the TypeScript SDK.
REPLAY_UNSAFE = frozenset(
    {
        "actClaim",
        "inputClaim",
        "runClaimShell",
        "writeClaimFile",
        "deleteClaimFile",
        "launchClaimWindow",
        "closeClaimWindow",
        "writeRunStdin",
        "createSecret",
        "createStoredSecret",
        "createViewerTicket",
        "createApiKey",
        "createWebhook",
        "rotateWebhookSecret",
    }
)


@dataclass(frozen=True)
class RetryPolicy:
    """RetryPolicy: `max_retries` retries after the first attempt; delays in seconds."""

    max_retries: int = 3
    base_delay: float = 0.25
    max_delay: float = 8.0
    # A Retry-After longer than this is not waited for: the 429 is raised to the caller.
    max_retry_after: float = 65.0

    def backoff(self, attempt: int) -> float:
        """backoff is full jitter: uniform in [0, min(max_delay, base * 2**attempt)]."""
        return random.uniform(0, min(self.max_delay, self.base_delay * (2**attempt)))

    def delay(self, attempt: int, retry_after: Optional[float]) -> Optional[float]:
        """delay before retry number `attempt + 1`, or None when the caller should give up."""
        if attempt >= self.max_retries:
            return None
        if retry_after is None:
            return self.backoff(attempt)
        if retry_after > self.max_retry_after:
            return None
        # Retry-After is the earliest moment; a little jitter keeps clients from arriving together.
        return retry_after + random.uniform(0, self.base_delay)


def is_retryable_status(operation_id: str, status: int) -> bool:
    if status not in RETRY_STATUSES:
        return False
    return operation_id not in REPLAY_UNSAFE or status == 429


def wait_before_retry(
    policy: RetryPolicy,
    operation_id: str,
    attempt: int,
    status: int,
    code: str,
    retry_after: Optional[float],
) -> Optional[float]:
    """wait_before_retry: seconds to wait before trying an error answer again, or None to raise it.

    `409 idempotency_in_progress` is the API's "retry later" (the first request with this key is
    still running), so it is retried like a dropped connection. A `429 quota_exceeded` without
    Retry-After is not: waiting frees no quota unless the API says when.
    """
    if code == "idempotency_in_progress":
        return policy.delay(attempt, None)
    if not is_retryable_status(operation_id, status):
        return None
    if status == 429 and code != "rate_limited" and retry_after is None:
        return None
    return policy.delay(attempt, retry_after)
