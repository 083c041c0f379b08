import { CubicleError } from '../errors.js';
import { UsageError } from './args.js';

/**
 * ExitCodes: what scripts can rely on. `cubicle shell` exits with the command's own code when
 * the call succeeded (124 when it timed out, as timeout(1) does); these apply to the CLI itself.
 */
export const ExitCodes = {
  ok: 0,
  /** An unexpected failure (a bug, or the API's internal_error). */
  failure: 1,
  /** The command line or an input file is wrong. */
  usage: 2,
  /** Not logged in, or the key is unknown, revoked, expired or lacks the role (401/403). */
  auth: 3,
  /** No such pool, claim or run for this tenant, or it has ended (404/410). */
  not_found: 4,
  /** The API refused the request: validation, conflict, quota, rate limit (other 4xx). */
  rejected: 5,
  /** The API could not be reached or is unavailable (connection, timeout, 502/503/504). */
  unavailable: 6,
  /** `pools apply` showed changes but did not apply them (no --yes, not confirmed). */
  not_applied: 7,
} as const;

/** exitCodeOf maps any error of a command to its documented exit code. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return ExitCodes.usage;
  if (!(error instanceof CubicleError)) return ExitCodes.failure;
  if (error.status === 0) return ExitCodes.unavailable;
  if (error.status === 401 || error.status === 403) return ExitCodes.auth;
  if (error.status === 404 || error.status === 410) return ExitCodes.not_found;
  if (error.status >= 500) return error.status === 500 ? ExitCodes.failure : ExitCodes.unavailable;
  return ExitCodes.rejected;
}
