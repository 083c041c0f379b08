// A real HTTP client for bodies over a server's limit, in a worker thread: a client on the
// server's own event loop takes turns with it and never meets the race a separate client does
// (the server closing while the client is still sending: EPIPE instead of the answer).
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

export interface Upload {
  /** Where to POST (http://127.0.0.1:port/path). */
  url: string;
  headers?: Record<string, string>;
  bytes: number;
  /** Transfer-Encoding: chunked instead of Content-Length. */
  chunked: boolean;
  /** false sends `Connection: close`: the answer then ends the connection. */
  keepAlive: boolean;
  tries: number;
}

/** What the client saw first: the answer (status, envelope code) or the request's error code. */
export interface UploadOutcome {
  status?: number;
  code?: string;
  error?: string;
}

const UPLOADER = `
const http = require('node:http');
const { parentPort, workerData: w } = require('node:worker_threads');
const body = Buffer.alloc(w.bytes, 0x20);
const post = () => new Promise((resolve) => {
  const url = new URL(w.url);
  const req = http.request({
    host: url.hostname, port: url.port, method: 'POST', path: url.pathname,
    agent: w.keepAlive ? new http.Agent({ keepAlive: true }) : false,
    headers: {
      ...w.headers,
      'content-type': 'application/json',
      ...(w.chunked ? {} : { 'content-length': String(body.length) }),
    },
  });
  req.on('response', (res) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => (text += chunk));
    res.on('end', () => {
      let code;
      try { code = JSON.parse(text).error?.code; } catch { code = 'not JSON: ' + text.slice(0, 80); }
      resolve(code === undefined ? { status: res.statusCode } : { status: res.statusCode, code });
      req.destroy();
    });
    res.on('error', (err) => resolve({ error: err.code ?? err.message }));
  });
  req.on('error', (err) => resolve({ error: err.code ?? err.message }));
  // Streamed in 64 KiB writes, the way a client uploads a file it reads.
  let offset = 0;
  const pump = () => {
    while (offset < body.length) {
      const chunk = body.subarray(offset, (offset += 64 * 1024));
      if (!req.write(chunk)) return void req.once('drain', pump);
    }
    req.end();
  };
  pump();
});
(async () => {
  const outcomes = [];
  for (let i = 0; i < w.tries; i++) outcomes.push(await post());
  parentPort.postMessage(outcomes);
})();
`;

/** uploadOverLimit posts `bytes` of spaces `tries` times, one after the other, from a worker thread. */
export async function uploadOverLimit(upload: Upload): Promise<UploadOutcome[]> {
  const worker = new Worker(UPLOADER, { eval: true, workerData: upload });
  try {
    const [outcomes] = (await once(worker, 'message')) as [UploadOutcome[]];
    return outcomes;
  } finally {
    await worker.terminate();
  }
}

/** The four ways a client sends a body: chunked or with Content-Length, kept alive or closing. */
export const UPLOAD_WAYS = [
  ['chunked, keep-alive', { chunked: true, keepAlive: true }],
  ['chunked, Connection: close', { chunked: true, keepAlive: false }],
  ['content-length, keep-alive', { chunked: false, keepAlive: true }],
  ['content-length, Connection: close', { chunked: false, keepAlive: false }],
] as const;
