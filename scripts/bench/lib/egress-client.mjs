// The egress bench's client (scripts/bench/egress.mjs): the same code runs on the host (direct
// to the fake internet) and inside a sandbox namespace (through the egress point), so both
// sides differ only in the path. One measurement per run; prints one JSON line.
//   node egress-client.mjs connect <n> <ip> <servername> <ca.pem>   TCP + TLS handshake, ms each
//   node egress-client.mjs download <url>                          bytes and seconds
//   node egress-client.mjs requests <n> <url>                       n GETs, a new connection each
//   node egress-client.mjs denials <n> <ip> <firstPort>             attempt times (epoch ms)
//   node egress-client.mjs https <n> <ip> <servername> <ca.pem…>    n HTTPS GETs of /echo-headers,
//                                                                  a new connection each
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

const [mode, ...args] = process.argv.slice(2);
const out = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

function handshake(ip, servername, ca) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = tlsConnect({ host: ip, port: 443, servername, ca }, () => {
      const ms = performance.now() - started;
      socket.destroy();
      resolve(ms);
    });
    socket.on('error', reject);
  });
}

function get(url, agent) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        let bytes = 0;
        res.on('data', (chunk) => (bytes += chunk.length));
        res.on('end', () => resolve(bytes));
      })
      .on('error', reject);
  });
}

switch (mode) {
  case 'connect': {
    const [n, ip, servername, caPath] = args;
    const ca = readFileSync(caPath);
    const ms = [];
    for (let i = 0; i < Number(n); i += 1) ms.push(await handshake(ip, servername, ca));
    out({ ms });
    break;
  }
  case 'download': {
    const started = performance.now();
    const bytes = await get(args[0], new http.Agent({ keepAlive: false }));
    out({ bytes, seconds: (performance.now() - started) / 1000 });
    break;
  }
  case 'requests': {
    const agent = new http.Agent({ keepAlive: false });
    const started = performance.now();
    for (let i = 0; i < Number(args[0]); i += 1) await get(args[1], agent);
    out({ seconds: (performance.now() - started) / 1000 });
    break;
  }
  case 'denials': {
    const [n, ip, firstPort] = args;
    const attempts = [];
    for (let i = 0; i < Number(n); i += 1) {
      const port = Number(firstPort) + i;
      const at = Date.now();
      await new Promise((resolve) => {
        const socket = tcpConnect({ host: ip, port }, () => socket.write('x'));
        socket.on('error', resolve);
        socket.on('close', resolve);
        socket.setTimeout(3000, () => socket.destroy());
      });
      attempts.push({ port, at });
    }
    out({ attempts });
    break;
  }
  case 'https': {
    // The point and Squid answer bound hosts with their CA's leaf; direct, the site's own.
    const [n, ip, servername, ...caPaths] = args;
    const ca = caPaths.map((path) => readFileSync(path));
    const agent = new https.Agent({ keepAlive: false, ca, servername });
    let headerNames = [];
    const started = performance.now();
    for (let i = 0; i < Number(n); i += 1)
      headerNames = await new Promise((resolve, reject) => {
        https
          .get({ host: ip, path: '/echo-headers', agent, headers: { host: servername } }, (res) => {
            let text = '';
            res.on('data', (chunk) => (text += chunk));
            res.on('end', () => resolve(JSON.parse(text).header_names ?? []));
          })
          .on('error', reject);
      });
    out({ seconds: (performance.now() - started) / 1000, headerNames });
    break;
  }
  default:
    throw new Error(`unknown mode ${mode}`);
}
