// A minimal HTTP/1.1 keep-alive client for benchmarks on one small machine. The client shares
// the CPU with what it measures: node:http costs ~0.3-0.9 ms of CPU per request here (request
// object, header validation, streams), which a 32-client burst pays beside the API. This one
// writes each request as one buffer on a kept-alive socket and reads `Content-Length` answers
// (Fastify's JSON replies); anything else (chunked, upgrade) is an error, not a guess.
import net from 'node:net';

const CRLF2 = Buffer.from('\r\n\r\n');

function connection(host, port) {
  const socket = net.connect({ host, port });
  socket.setNoDelay(true);
  let buffered = Buffer.alloc(0);
  let waiting = null; // { resolve, reject }
  let failed = null;
  const ready = new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const fail = (err) => {
    failed = err;
    waiting?.reject(err);
    waiting = null;
  };
  socket.on('error', fail);
  socket.on('close', () => fail(new Error('connection closed')));
  socket.on('data', (chunk) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    const end = buffered.indexOf(CRLF2);
    if (end < 0 || !waiting) return;
    const head = buffered.subarray(0, end).toString('latin1');
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) return fail(new Error(`answer without Content-Length: ${head.split('\r\n')[0]}`));
    const total = end + 4 + Number(length[1]);
    if (buffered.length < total) return;
    const body = buffered.subarray(end + 4, total).toString('utf8');
    buffered = buffered.subarray(total);
    const done = waiting;
    waiting = null;
    // Server-Timing (drive answers say where their time went): kept as its raw value.
    const timing = /\r\nserver-timing: *([^\r]*)/i.exec(head);
    done.resolve({ status, body: body ? JSON.parse(body) : null, serverTiming: timing?.[1] });
  });
  return {
    ready,
    get alive() {
      return failed === null;
    },
    request(bytes) {
      if (failed) return Promise.reject(failed);
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        socket.write(bytes);
      });
    },
    close: () => socket.destroy(),
  };
}

/**
 * leanClient opens `sockets` kept-alive connections and returns call(method, path, body), which
 * sends on an idle connection (or waits for one) and resolves with { status, body }.
 */
export async function leanClient(baseUrl, sockets, headers) {
  const { hostname, port } = new URL(baseUrl);
  const conns = Array.from({ length: sockets }, () => connection(hostname, Number(port)));
  await Promise.all(conns.map((c) => c.ready));
  const idle = [...conns];
  const queue = [];
  const fixed = Object.entries({ host: `${hostname}:${port}`, ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const call = async (method, path, body) => {
    const payload = body === undefined ? '' : JSON.stringify(body);
    const bytes = Buffer.from(
      `${method} ${path} HTTP/1.1\r\n${fixed}` +
        (payload
          ? `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`
          : '\r\n'),
    );
    let conn = idle.pop() ?? (await new Promise((resolve) => queue.push(resolve)));
    // The server closes connections idle past its keep-alive timeout (long refills): reopen.
    if (!conn.alive) {
      conn = connection(hostname, Number(port));
      await conn.ready;
    }
    try {
      return await conn.request(bytes);
    } finally {
      const next = queue.shift();
      if (next) next(conn);
      else idle.push(conn);
    }
  };
  call.close = () => conns.forEach((c) => c.close());
  return call;
}
