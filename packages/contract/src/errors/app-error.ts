import { statusForCode, type ErrorCodeName } from './codes.js';

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
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
