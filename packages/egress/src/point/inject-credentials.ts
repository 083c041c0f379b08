import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext, rootCertificates, TLSSocket, type SecureContext } from 'node:tls';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A credential bound to hosts: requests from the sandbox to one of `hosts` (exact names, HTTPS
 * only) get `header: value` added at the egress point. `value` is the formatted secret
 * ("Bearer …"); it lives in the point's memory and is never sent to the sandbox.
 */
export interface CredentialInjection {
  hosts: string[];
  header: string;
  value: string;
}

/** The installation's CA for bound hosts (the sandbox trusts it; see caBundleWith). */
export interface InjectionCa {
  certPem: string;
  keyPem: string;
}

/**
 * Credentials injected at egress, as an egress point (local or Kubernetes) is given them: the
 * installation CA that signs bound hosts' certificates and, in tests, a CA the point trusts
 * upstream (the fake internet's). Without them no TLS is ever terminated.
 */
export interface EgressCredentials {
  ca: InjectionCa;
  upstreamCa?: string;
}

/** injectorOf is the injector an egress point holds for its credentials (null: none given). */
export const injectorOf = (credentials: EgressCredentials | undefined) =>
  credentials ? new CredentialInjector(credentials.ca, credentials.upstreamCa) : null;

/** Request headers a proxy must not pass on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
];

/** caBundleWith is the system bundle plus the installation CA: the sandbox's trust store. */
export async function caBundleWith(caPem: string): Promise<string> {
  const system = await readFile('/etc/ssl/certs/ca-certificates.crt', 'utf8').catch(() => '');
  return `${system.trimEnd()}\n${caPem.trim()}\n`;
}

/**
 * CredentialInjector terminates TLS for bound hosts only: it answers the sandbox with a leaf
 * certificate for the name the sandbox asked for (signed by the installation CA, minted once per
 * name with openssl), reads each HTTP/1.1 request, sets the bound header, and sends the request
 * on over a TLS connection of its own to the same address, verified as that name against the
 * host's trust store. Every other connection is spliced without being opened (sandbox-attachment).
 */
export class CredentialInjector {
  private readonly dir = mkdtempSync(join(tmpdir(), 'cubicle-egress-ca-'));
  private readonly contexts = new Map<string, Promise<SecureContext>>();
  /**
   * One context for every upstream connection: building one per request (`ca:` a list of the
   * system's ~140 roots) parsed them all each time, 30 ms of CPU per request in bench:egress.
   */
  private readonly upstream: SecureContext;

  constructor(
    private readonly ca: InjectionCa,
    /** Extra PEM the point trusts upstream (the fake internet's CA in tests). */
    upstreamCa?: string,
  ) {
    writeFileSync(join(this.dir, 'ca.pem'), ca.certPem, { mode: 0o600 });
    writeFileSync(join(this.dir, 'ca.key'), ca.keyPem, { mode: 0o600 });
    this.upstream = createSecureContext({
      ca: upstreamCa ? [...rootCertificates, upstreamCa] : [...rootCertificates],
    });
  }

  private contextFor(host: string): Promise<SecureContext> {
    let context = this.contexts.get(host);
    if (!context) {
      context = this.mint(host);
      context.catch(() => this.contexts.delete(host));
      this.contexts.set(host, context);
    }
    return context;
  }

  private async mint(host: string): Promise<SecureContext> {
    const base = join(this.dir, randomBytes(6).toString('hex'));
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    await run('openssl', [
      'req',
      '-new',
      ...ec,
      '-keyout',
      `${base}.key`,
      '-out',
      `${base}.csr`,
      '-subj',
      `/CN=${host}`,
    ]);
    await writeFile(
      `${base}.ext`,
      `subjectAltName=DNS:${host}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
    );
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      `${base}.csr`,
      '-CA',
      join(this.dir, 'ca.pem'),
      '-CAkey',
      join(this.dir, 'ca.key'),
      '-set_serial',
      `0x${randomBytes(12).toString('hex')}`,
      '-days',
      '7',
      '-extfile',
      `${base}.ext`,
      '-out',
      `${base}.pem`,
    ]);
    const [key, cert] = await Promise.all([readFile(`${base}.key`), readFile(`${base}.pem`)]);
    for (const ext of ['key', 'csr', 'ext', 'pem']) rmSync(`${base}.${ext}`, { force: true });
    return createSecureContext({ key, cert: Buffer.concat([cert, Buffer.from(this.ca.certPem)]) });
  }

  /**
   * serve takes over `client` (paused, its first bytes `first` already read: the ClientHello)
   * for `host` at `ip:port`, and returns the TLS socket it answers on (to be cut with it).
   */
  async serve(
    client: Socket,
    first: Buffer,
    target: { host: string; ip: string; port: number },
    injection: CredentialInjection,
  ): Promise<TLSSocket> {
    const secureContext = await this.contextFor(target.host);
    // A plain stream in front of the socket replays the ClientHello already read (a TLSSocket
    // over a net.Socket reads its handle directly and would miss it).
    const stream = new Duplex({
      read: () => void client.resume(),
      write: (chunk: Buffer, _encoding, done) => void client.write(chunk, done),
      final: (done) => {
        client.end();
        done();
      },
      destroy: (err, done) => {
        client.destroy();
        done(err);
      },
    });
    stream.push(first);
    client.on('data', (chunk: Buffer) => {
      if (!stream.push(chunk)) client.pause();
    });
    client.once('end', () => stream.push(null));
    client.once('close', () => stream.destroy());
    const secure = new TLSSocket(stream, {
      isServer: true,
      secureContext,
      ALPNProtocols: ['http/1.1'],
    });
    secure.on('error', () => client.destroy());
    const server = createHttpServer((req, res) => {
      const headers: IncomingHttpHeaders = {};
      for (const [name, value] of Object.entries(req.headers))
        if (!HOP_BY_HOP.includes(name)) headers[name] = value;
      headers[injection.header.toLowerCase()] = injection.value;
      // tls.connect takes `secureContext`; https's option type does not list it.
      const options: RequestOptions & { secureContext: SecureContext } = {
        host: target.ip,
        port: target.port,
        servername: target.host,
        secureContext: this.upstream,
        method: req.method,
        path: req.url,
        headers,
        agent: false,
      };
      const upstream = httpsRequest(options, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('Cubicle egress: the bound host could not be reached\n');
      });
      req.pipe(upstream);
    });
    server.emit('connection', secure);
    return secure;
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
