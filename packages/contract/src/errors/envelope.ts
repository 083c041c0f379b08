import { z } from 'zod';
import { ErrorCodeList } from './codes.js';
import { named } from '../registry.js';

export const ErrorCode = named('ErrorCode', z.enum(ErrorCodeList));
export type ErrorCode = z.infer<typeof ErrorCode>;

/** ErrorBody is what every non-2xx response of the REST API and the guest driver carries. */
export const ErrorBody = named(
  'ErrorBody',
  z.strictObject({
    code: ErrorCode,
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
    request_id: z.string(),
  }),
);
export type ErrorBody = z.infer<typeof ErrorBody>;

export const ErrorEnvelope = named('ErrorEnvelope', z.strictObject({ error: ErrorBody }));
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;
