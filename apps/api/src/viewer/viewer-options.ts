import type { StreamLimits, ViewerKeys } from '@cubicle/viewer';

/** ViewerOptions turn on viewer tickets and the stream proxy in buildApp. */
export interface ViewerOptions {
  keys: ViewerKeys;
  /** Public URL of the web app (viewer_url is `<webUrl>/embed/<ticket>`). */
  webUrl: string;
  /** Public URL of this API for stream_url; default: the scheme and Host of the request. */
  publicApiUrl?: string;
  /** Concurrent streams per ticket and per tenant, across every replica sharing the Redis. */
  limits?: Partial<StreamLimits>;
  /** How long a crashed replica's stream slots stay taken (default 30 s). */
  leaseMs?: number;
  /** Bytes queued for one slow viewer before the proxy stops reading its desktop. */
  highWaterBytes?: number;
  /** How often open streams are re-checked against the database (pub/sub safety net). */
  recheckIntervalMs?: number;
}
