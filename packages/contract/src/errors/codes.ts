/**
 * ErrorCodes is the closed list of error codes Cubicle returns, each with the one HTTP status
 * it maps to and a sentence for the documentation. Adding a code is a contract change: the
 * OpenAPI document lists them, and clients switch on `code`, never on `message`.
 */
export const ErrorCodes = {
  validation_failed: {
    status: 400,
    description: 'The request did not match its schema; `details.issues` names the failing fields.',
  },
  invalid_json: { status: 400, description: 'The request body is not valid JSON.' },
  invalid_id: { status: 400, description: 'A path identifier is malformed.' },
  webhook_url_refused: {
    status: 400,
    description:
      'The webhook URL is not deliverable: not http(s), or its host is (or resolves to) a private, loopback, link-local, unique-local, unspecified, reserved or IPv4-embedding IPv6 address (`details.reason`; what a name resolved to is never told). Operators may allow private addresses (CUBICLE_WEBHOOKS_ALLOW_PRIVATE).',
  },
  invalid_element_token: {
    status: 400,
    description: 'An element token is malformed (expected `s<snapshot>:<n>`).',
  },
  unauthenticated: {
    status: 401,
    description: 'No credentials, or credentials that are unknown, revoked or expired.',
  },
  invalid_ticket: {
    status: 401,
    description:
      'A viewer ticket is malformed or badly signed; for the stream, also expired, revoked or of an ended claim (`details.state`).',
  },
  forbidden: {
    status: 403,
    description: 'The credentials are valid but their role may not do this.',
  },
  /**
   * A claim (`stored_secrets`) or a run (`secrets`) named a stored secret that the key's role may
   * not use: stored secrets are usable by admin keys unless written with `usable_by: "members"`.
   * `details.secrets` lists the names refused; nothing was changed.
   */
  secret_not_usable: {
    status: 403,
    description:
      'A stored secret named by the request is usable by admin keys only (`details.secrets`); an admin opens it to members with `usable_by: "members"`.',
  },
  not_found: {
    status: 404,
    description: "No such resource for this tenant (other tenants' resources are never revealed).",
  },
  route_not_found: { status: 404, description: 'No such endpoint.' },
  window_not_found: { status: 404, description: 'The guest has no window with this id.' },
  method_not_allowed: { status: 405, description: 'The endpoint exists but not for this method.' },
  conflict: {
    status: 409,
    description: 'The resource is in a state that does not allow this change.',
  },
  already_exists: { status: 409, description: 'A resource with this name already exists.' },
  idempotency_key_reused: {
    status: 409,
    description: 'The Idempotency-Key was already used with a different request body.',
  },
  idempotency_in_progress: {
    status: 409,
    description: 'A request with this Idempotency-Key is still being processed; retry later.',
  },
  claim_not_active: { status: 409, description: 'The claim is pending, released or expired.' },
  /**
   * The claim's backend cannot do this to its sandbox: pausing a Kubernetes Pod (a container
   * cannot be frozen through the Kubernetes API), or a local desktop without a cgroup freezer.
   */
  not_supported_by_backend: {
    status: 409,
    description:
      "The claim's backend cannot do this (pause and resume: Kubernetes Pods cannot be frozen; a local desktop without a cgroup freezer). `details.backend` names the backend; nothing was changed.",
  },
  recording_not_allowed: {
    status: 409,
    description:
      "The claim asked for `recording` but its pool offers none (`pool.recording` is null); an admin sets the pool's `recording` first.",
  },
  /**
   * A human holds the claim's desktop (a handoff): the agent's driving calls (act, input, shell,
   * file writes and deletes, window launch and close, new runs, run stdin) are refused until the
   * handoff is returned or its lease expires. `details.handoff_id` names it; reading calls work.
   */
  handoff_active: {
    status: 409,
    description:
      'A human holds the desktop (`details.handoff_id`): driving calls are refused until the handoff is returned or its lease expires; reads (observe, screenshot, files read) still work.',
  },
  gone: {
    status: 410,
    description: 'The resource existed but has ended (released claim, deleted pool).',
  },
  payload_too_large: {
    status: 413,
    description: 'The request body or uploaded file is over the size limit.',
  },
  unsupported_media_type: {
    status: 415,
    description: 'The request body has a content type this endpoint does not accept.',
  },
  range_not_satisfiable: {
    status: 416,
    description:
      'The `Range` header asks for bytes past the end of the media (`details.size` is its length now).',
  },
  stale_element_token: {
    status: 422,
    description: 'The element token no longer resolves to the element it was issued for.',
  },
  ambiguous_target: {
    status: 422,
    description: 'More than one live element matches and none can be chosen without guessing.',
  },
  stale_screenshot: {
    status: 422,
    description: 'Pixel input must refer to the latest screenshot of the window.',
  },
  /**
   * An observe's `since` is not the window's latest snapshot: `details.reason` is `unknown` (never
   * issued, or forgotten), `replaced` (a newer observe of the window followed it) or
   * `other_window`. A diff is only ever against what the agent last saw; observe without `since`.
   */
  stale_snapshot: {
    status: 422,
    description:
      "An observe's `since` is not the window's latest snapshot (`details.reason`: unknown, replaced or other_window); observe without `since`.",
  },
  /**
   * A claim's `egress` would widen its pool's policy (a wider mode, an allow rule outside the
   * pool's allow list). `details.field` names the field, `details.rule` the rule.
   */
  egress_widens_pool: {
    status: 422,
    description:
      "A claim's `egress` may only narrow its pool's policy: `details.field` names the mode or allow rule that would widen it.",
  },
  profile_in_use: {
    status: 409,
    description:
      'The profile is held by another claim (one live claim per profile), or its last claim is still saving it at release; `details.claim_id` names the holder. Release that claim, or retry shortly.',
  },
  quota_exceeded: {
    status: 429,
    description: 'A tenant quota is reached; `details.limit` and `details.quota` say which.',
  },
  rate_limited: {
    status: 429,
    description: 'Too many requests for this key; retry after `Retry-After` seconds.',
  },
  internal_error: {
    status: 500,
    description:
      'An unexpected failure; the body carries no internal detail, the logs carry the request id.',
  },
  backend_unavailable: {
    status: 502,
    description: 'The sandbox backend or guest driver could not be reached.',
  },
  service_unavailable: {
    status: 503,
    description: 'A dependency (database, queue) is unavailable or the process is shutting down.',
  },
  timeout: { status: 504, description: 'The operation did not finish within its bound.' },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCodeName = keyof typeof ErrorCodes;

/** ErrorCodeList is the same closed list, as a tuple for `z.enum`. */
export const ErrorCodeList = Object.keys(ErrorCodes) as [ErrorCodeName, ...ErrorCodeName[]];

/** statusForCode is the one table lookup from code to HTTP status. */
export function statusForCode(code: ErrorCodeName): number {
  return ErrorCodes[code].status;
}
