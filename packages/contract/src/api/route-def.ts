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
  responses: Partial<Record<200 | 201 | 202 | 204 | 206, z.ZodType | BinaryBody | null>>;
  errors: ErrorCodeName[];
  /** Largest request body in bytes (default DEFAULT_BODY_LIMIT_BYTES); larger is 413 `payload_too_large`. */
  bodyLimit?: number;
}

/**
 * SocketRouteDef describes one WebSocket endpoint as data. OpenAPI has no WebSocket operation, so
 * the document lists these apart from its paths, under `x-cubicle-websockets` (clients generated
 * from the paths never meet them); the API mounts each from its definition, and a test holds the
 * document and the server together as it does for REST routes.
 */
export type SocketRouteDef = JsonSocketRouteDef | BinarySocketRouteDef;

interface SocketRouteBase {
  operationId: string;
  /** OpenAPI-style path (`/v1/runs/{run_id}/events/ws`); opened with `GET` + `Upgrade: websocket`. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  auth: RouteDef['auth'];
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** Close codes the server ends the socket with, and what each tells the client. */
  closeCodes: Record<number, string>;
  /** Refusals answered before the upgrade, as the error envelope. */
  errors: ErrorCodeName[];
}

/** A socket whose every server frame is one JSON text message (a run's events). */
export interface JsonSocketRouteDef extends SocketRouteBase {
  frames: 'json';
  /** Every text frame the server sends is one of these, as JSON. */
  serverMessage: z.ZodType;
}

/** A socket that carries another protocol in binary frames (the viewer's RFB), not JSON. */
export interface BinarySocketRouteDef extends SocketRouteBase {
  frames: 'binary';
  /** The subprotocol the client asks for (`Sec-WebSocket-Protocol`). */
  subprotocol: string;
  /** The protocol the frames carry, for a person reading the document. */
  protocol: string;
}

/** defineSocketRoute keeps literal types while checking the shape. */
export function defineSocketRoute<const R extends SocketRouteDef>(route: R): R {
  return route;
}

/**
 * DEFAULT_BODY_LIMIT_BYTES bounds every request body but those of routes that carry file
 * contents or shell input; the document publishes each operation's limit and the server applies
 * exactly that (a test holds them together).
 */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/** bodyLimitOf is the request body limit of one route, as published and as served. */
export function bodyLimitOf(route: Pick<RouteDef, 'bodyLimit'>): number {
  return route.bodyLimit ?? DEFAULT_BODY_LIMIT_BYTES;
}

/**
 * BinaryBody marks a response that is raw bytes of one media type instead of JSON, e.g. a PNG a
 * caller saves with `curl -o`. Errors are still the JSON envelope.
 */
export interface BinaryBody {
  mediaType: 'image/png' | 'video/mp4';
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
