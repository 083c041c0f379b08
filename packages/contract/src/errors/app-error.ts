import { statusForCode, type ErrorCodeName } from './codes.js';
import type { ErrorBody, ErrorEnvelope } from './envelope.js';

/**
 * AppError is the one error type services throw on purpose. Its code decides the HTTP status
 * (through the codes table); its message is safe to show to the caller; `details` must never
 * carry secrets or internal state.
 */
export class AppError extends Error {
  readonly code: ErrorCodeName;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCodeName, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return statusForCode(this.code);
  }

  /**
   * toEnvelope is the one place the wire form of an error is built: the API's error handler
   * sends it, and clients (the SDK's CubicleError) parse it back to code, message and details.
   */
  toEnvelope(requestId: string): ErrorEnvelope {
    const body: ErrorBody = {
      code: this.code,
      message: this.message,
      request_id: requestId,
      ...(this.details ? { details: this.details } : {}),
    };
    return { error: body };
  }

  /** fromEnvelope rebuilds the AppError an envelope was made from (e.g. a guest driver's answer). */
  static fromEnvelope(envelope: ErrorEnvelope): AppError {
    const { code, message, details } = envelope.error;
    return new AppError(code, message, details);
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
