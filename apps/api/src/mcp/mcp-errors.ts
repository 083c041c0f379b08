import { isAppError, type ErrorCodeName } from '@cubicle/contract/errors';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';

/**
 * ToolCallError is what a failed tools/call answers: a JSON-RPC error whose `data.code` is the
 * stable error code the REST call would have answered (`claim_not_active`, `window_not_found`,
 * …), with its HTTP status and details, so a client switches on the same codes over both. The
 * SDK sends `code`, `message` and `data` of a thrown error as they are.
 */
export class ToolCallError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: { code: ErrorCodeName; status: number; request_id: string; details?: unknown },
  ) {
    super(message);
    this.name = 'ToolCallError';
  }
}

/**
 * APPLICATION_ERROR is the JSON-RPC code of a refusal that is neither bad arguments nor our
 * failure (claim not active, window not found, timeout, …): -32000 opens the range JSON-RPC
 * leaves to servers; `data.code` tells them apart.
 */
export const APPLICATION_ERROR = -32000;

const INVALID_PARAMS_CODES: ReadonlySet<ErrorCodeName> = new Set<ErrorCodeName>([
  'validation_failed',
  'invalid_json',
  'invalid_element_token',
]);

/**
 * toToolCallError maps what a tool threw to its JSON-RPC error: bad arguments are InvalidParams
 * (-32602), other AppErrors -32000 with their code, anything else is our bug: logged, and
 * answered InternalError (-32603) `internal_error` without its message (as a REST 500 is).
 */
export function toToolCallError(
  err: unknown,
  requestId: string,
  log: FastifyBaseLogger,
): ToolCallError {
  if (err instanceof ToolCallError) return err;
  if (isAppError(err)) {
    const code = INVALID_PARAMS_CODES.has(err.code) ? ErrorCode.InvalidParams : APPLICATION_ERROR;
    return new ToolCallError(code, `${err.code}: ${err.message}`, {
      code: err.code,
      status: err.status,
      request_id: requestId,
      ...(err.details ? { details: err.details } : {}),
    });
  }
  log.error({ err }, 'MCP tool call failed');
  return new ToolCallError(ErrorCode.InternalError, 'internal_error: the call failed on our side', {
    code: 'internal_error',
    status: 500,
    request_id: requestId,
  });
}
