// The fake internet's servers, run inside the test's own network namespace (fake-internet.ts
// starts this with nsenter): a DNS server for the test zone, HTTP on 80 and 8080, HTTPS on 443
// (certificate of the test CA), a TCP echo on 7 and a UDP echo on 7. The namespace treats its
// whole documentation ranges as local, so every address in them answers here. Nothing here
// reaches beyond the namespace. Configuration arrives as JSON on argv[2].
import { createSocket } from 'node:dgram';
import { createServer as createHttp } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { createServer as createTcp } from 'node:net';

const config = JSON.parse(process.argv[2]);
/** zone: name (or *.suffix) -> addresses. */
const zone = new Map(Object.entries(config.zone));

function lookup(name) {
  if (zone.has(name)) return zone.get(name);
  const parts = name.split('.');
  for (let i = 1; i < parts.length; i += 1) {
    const wild = `*.${parts.slice(i).join('.')}`;
    if (zone.has(wild)) return zone.get(wild);
  }
  return null;
}

function answerDns(message) {
  if (message.length < 12) return null;
  let at = 12;
  const labels = [];
  while (message[at]) {
    labels.push(message.toString('latin1', at + 1, at + 1 + message[at]));
    at += 1 + message[at];
  }
  const qtype = message.readUInt16BE(at + 1);
  const question = message.subarray(12, at + 5);
  const addresses = lookup(labels.join('.').toLowerCase());
  const header = Buffer.alloc(12);
  header.writeUInt16BE(message.readUInt16BE(0), 0);
  const records = addresses && qtype === 1 ? addresses : [];
  header.writeUInt16BE(0x8180 | (addresses ? 0 : 3), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  const answers = records.map((ip) => {
    const r = Buffer.alloc(16);
    r.writeUInt16BE(0xc00c, 0);
    r.writeUInt16BE(1, 2);
    r.writeUInt16BE(1, 4);
    r.writeUInt32BE(60, 6);
    r.writeUInt16BE(4, 10);
    ip.split('.').forEach((p, i) => r.writeUInt8(Number(p), 12 + i));
    return r;
  });
  return Buffer.concat([header, question, ...answers]);
}

const dns = createSocket('udp4');
dns.on('message', (msg, peer) => {
  const reply = answerDns(msg);
  if (reply) dns.send(reply, peer.port, peer.address);
});
dns.bind(53, config.dnsAddress);

/** Every site answers who it is and what it saw; /bytes/N streams N bytes (downloads). */
function handler(scheme) {
  return (req, res) => {
    const match = /^\/bytes\/(\d+)$/.exec(req.url ?? '');
    if (match) {
      let left = Number(match[1]);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': left });
      const chunk = Buffer.alloc(256 * 1024, 120);
      const pump = () => {
        while (left > 0) {
          const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
          left -= piece.length;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        res.end();
      };
      return pump();
    }
    // What the server saw goes to the test (stdout), never back to the client in full: a
    // credential injected at egress must reach here and nowhere in the sandbox.
    process.stdout.write(
      `${JSON.stringify({ seen: { scheme, host: req.headers.host ?? null, path: req.url, headers: req.headers } })}\n`,
    );
    if (req.url === '/echo-headers') {
      const names = JSON.stringify({ header_names: Object.keys(req.headers) });
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(names);
    }
    // Like a real API, no site reflects a credential it was sent (a browser's favicon request to a
    // bound host would otherwise carry the injected value back into the sandbox's cache).
    const { authorization, ...reflected } = req.headers;
    const body = JSON.stringify({
      scheme,
      host: req.headers.host ?? null,
      address: req.socket.localAddress,
      path: req.url,
      headers: authorization === undefined ? reflected : { ...reflected, authorization: '[sent]' },
    });
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };
}

const servers = [];
for (const port of [80, 8080])
  servers.push(createHttp({ keepAlive: true }, handler('http')).listen(port, '0.0.0.0'));
servers.push(
  createHttps({ key: config.tls.key, cert: config.tls.cert }, handler('https')).listen(
    443,
    '0.0.0.0',
  ),
);
servers.push(createTcp((s) => s.on('error', () => {}).pipe(s)).listen(7, '0.0.0.0'));
const echo = createSocket('udp4');
echo.on('message', (msg, peer) => echo.send(msg, peer.port, peer.address));
echo.bind(7, '0.0.0.0');

let listening = 0;
for (const s of servers)
  s.on('listening', () => {
    listening += 1;
    if (listening === servers.length) process.stdout.write('ready\n');
  });
process.on('SIGTERM', () => process.exit(0));
