/**
 * Logger receives one line per HTTP attempt when debug logging is on (`logger` option, or
 * `CUBICLE_LOG=debug`, which logs with console.debug). The fields never hold credentials or
 * bodies: method, URL without sensitive query values, status, duration, attempt, request id.
 */
export interface Logger {
  debug(message: string, fields: RequestLogFields): void;
}

export interface RequestLogFields {
  operation: string;
  method: string;
  url: string;
  attempt: number;
  status?: number;
  durationMs: number;
  requestId?: string | null;
  error?: string;
}

/** consoleLogger is the logger `CUBICLE_LOG=debug` turns on. */
export const consoleLogger: Logger = {
  debug(message, fields) {
    console.debug(`[cubicle] ${message}`, fields);
  },
};

// Query parameters whose values are credentials somewhere in the API or in a proxy before it.
const SENSITIVE_QUERY = /^(ticket|token|key|api_key|secret|signature|password)$/i;

/** redactUrl keeps scheme, host, path and query names; it hides user info and sensitive values. */
export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  url.username = '';
  url.password = '';
  for (const name of [...url.searchParams.keys()]) {
    if (SENSITIVE_QUERY.test(name)) url.searchParams.set(name, '[redacted]');
  }
  return url.toString();
}
