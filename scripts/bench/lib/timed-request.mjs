// One timed JSON request for benchmarks that compare two paths with the same client: node:http
// on a caller's keep-alive agent, answering {ms, body, headers} for a 200 and rejecting anything
// else.
// A local sandbox's guest is `http+unix://<socket path>` (its network namespace is private).
import http from 'node:http';

/** timedRequest sends `body` (JSON) to `base` + `path` and times the whole answer. */
export function timedRequest(agent, base, method, path, headers, body) {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const url = new URL(path, base);
    const socketPath = url.protocol === 'http+unix:' ? decodeURIComponent(url.hostname) : null;
    const req = http.request(
      socketPath ? new URL(url.pathname + url.search, 'http://localhost') : url,
      {
        ...(socketPath ? { socketPath } : {}),
        method,
        agent,
        headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const ms = performance.now() - started;
          const text = Buffer.concat(chunks).toString();
          if (res.statusCode !== 200)
            return reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
          resolve({ ms, body: JSON.parse(text), headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
