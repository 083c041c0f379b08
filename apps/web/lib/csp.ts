import { EmbedOrigin } from '@cubicle/contract/api';

/**
 * frameAncestors builds the CSP `frame-ancestors` source list of an embed page from the tenant's
 * embed origins. Always `'self'` (the dashboard, same origin, may preview the viewer); with no
 * origins listed, nothing else may frame it. We chose `'self'` over `'none'` for that preview;
 * third-party sites need an explicit origin. Each origin is re-checked against the contract's
 * EmbedOrigin (https host, optional `*.` subdomain wildcard, port; http only for loopback): a
 * value that is not one (a `;` or quote would inject a directive) is dropped, never trusted.
 */
export function frameAncestors(origins: readonly string[]): string {
  const allowed = new Set(origins.filter((origin) => EmbedOrigin.safeParse(origin).success));
  return ["'self'", ...allowed].join(' ');
}

/** embedCsp is the whole Content-Security-Policy header value of an embed page. */
export function embedCsp(origins: readonly string[]): string {
  return `frame-ancestors ${frameAncestors(origins)}`;
}
