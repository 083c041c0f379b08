const SECRET_PARAMS = /([?&](?:ticket|token|key)=)[^&#]*/gi;

/** redactUrl hides credential-bearing query parameters of a URL before it is logged. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}
