import type { ErrorCode as ErrorCodeName, ErrorEnvelope } from './generated/api-types.js';

/**
 * ClientErrorCode: failures the SDK names itself, when no error envelope came back. Server codes
 * come from the contract's closed list (`ErrorCodeName`), so a `switch` on `code` is exhaustive.
 */
export type ClientErrorCode =
  | 'connection_failed'
  | 'request_timeout'
  | 'unexpected_response'
  // A computer-use tool call the adapter cannot map (unknown action, bad argument); nothing sent.
  | 'invalid_tool_action';

export type CubicleErrorCode = ErrorCodeName | ClientErrorCode;

/**
 * ErrorEnvelopeJson is the wire form of every non-2xx answer, the contract's `ErrorEnvelope`;
 * `code` is widened to a string because an older SDK may meet a code added to the API later.
 */
export type ErrorEnvelopeJson = {
  error: Omit<ErrorEnvelope['error'], 'code'> & { code: string };
};

/**
 * CubicleError is the one error a caller of Cubicle sees: the API's `AppError` rendered as the
 * envelope, parsed back with `fromEnvelope` (and rendered again with `toJSON`, so the round trip
 * is lossless). `status` is 0 when no HTTP answer arrived.
 */
export class CubicleError extends Error {
  readonly code: CubicleErrorCode;
  readonly status: number;
  readonly requestId: string | null;
  readonly details: Record<string, unknown> | undefined;

  constructor(init: {
    code: CubicleErrorCode;
    message: string;
    status: number;
    requestId?: string | null;
    details?: Record<string, unknown> | undefined;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'CubicleError';
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId ?? null;
    this.details = init.details;
  }

  /** fromEnvelope parses an error answer; a body that is not the envelope is `unexpected_response`. */
  static fromEnvelope(status: number, body: unknown, requestId?: string | null): CubicleError {
    const error = isEnvelope(body) ? body.error : undefined;
    if (!error) {
      return new CubicleError({
        code: 'unexpected_response',
        message: `the API answered ${status} without an error envelope`,
        status,
        requestId: requestId ?? null,
      });
    }
    return new CubicleError({
      code: error.code as CubicleErrorCode,
      message: error.message,
      status,
      requestId: error.request_id,
      details: error.details,
    });
  }

  /** toJSON renders the envelope again, exactly as the API sent it. */
  toJSON(): ErrorEnvelopeJson {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details ? { details: this.details } : {}),
        request_id: this.requestId ?? '',
      },
    };
  }
}

function isEnvelope(body: unknown): body is ErrorEnvelopeJson {
  if (typeof body !== 'object' || body === null) return false;
  const error = (body as { error?: unknown }).error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

/** isCubicleError narrows an unknown thrown value. */
export function isCubicleError(error: unknown): error is CubicleError {
  return error instanceof CubicleError;
}
