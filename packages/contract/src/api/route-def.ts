import type { z } from 'zod';
import type { ErrorCodeName } from '../errors/codes.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * RouteDef describes one REST endpoint as data. The OpenAPI document is generated from these,
 * and the API's routes take their validation schemas from the same objects, so the published
 * document cannot drift from what the server accepts.
 */
export interface RouteDef {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI-style path (`/v1/pools/{name}`); `toFastifyPath` converts it. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  /** `api_key`: bearer key; `admin` additionally needs the admin role; `none`: public. */
  auth: 'none' | 'api_key' | 'admin';
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** Request headers the endpoint reads, e.g. `Idempotency-Key`. */
  headers?: z.ZodObject;
  /** Status → body schema (null: no body; BinaryBody: raw bytes). Errors are added from `errors`. */
  responses: Partial<Record<200 | 201 | 202 | 204, z.ZodType | BinaryBody | null>>;
  errors: ErrorCodeName[];
}

/**
 * BinaryBody marks a response that is raw bytes of one media type instead of JSON, e.g. a PNG a
 * caller saves with `curl -o`. Errors are still the JSON envelope.
 */
export interface BinaryBody {
  mediaType: 'image/png';
}

/** binaryBody declares a raw-bytes response. */
export const binaryBody = (mediaType: BinaryBody['mediaType']): BinaryBody => ({ mediaType });

/** isBinaryBody tells a raw-bytes response from a zod schema. */
export function isBinaryBody(value: unknown): value is BinaryBody {
  return typeof value === 'object' && value !== null && !('_zod' in value) && 'mediaType' in value;
}

/** defineRoute keeps literal types while checking the shape. */
export function defineRoute<const R extends RouteDef>(route: R): R {
  return route;
}

/** toFastifyPath turns `{name}` segments into `:name`. */
export function toFastifyPath(path: string): string {
  return path.replace(/\{([a-zA-Z_]+)\}/g, ':$1');
}
