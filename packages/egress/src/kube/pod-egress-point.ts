import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { EffectiveEgressPolicy } from '@cubicle/contract/api';
import { effectivePolicy, withHostAddresses } from '../policy/index.js';
import type { EgressDenialSink } from '../policy/source.js';
import { DenialBatcher } from '../point/denial-batcher.js';
import { buildAnswer, DNS_RCODE, parseQuery } from '../point/dns-wire.js';
import { cidrMatcher, ownAddresses } from '../point/egress-point.js';
import { serveDnsTcp } from '../point/sandbox-attachment.js';
import { injectorOf, type EgressCredentials } from '../point/inject-credentials.js';
import { SandboxGate, type AttachmentContext } from '../point/sandbox-gate.js';
import { UpstreamResolver } from '../point/upstream-resolver.js';
import { serveConnect, serveForward, type GateOf } from './proxy-requests.js';
import { SandboxGates } from './sandbox-gates.js';
import type { EgressPolicySource } from '../policy/source.js';

export interface PodEgressPointOptions {
  /** Where the point listens (0.0.0.0 in its Pod). */
  host?: string;
  /** The resolver's port, UDP and TCP (the chart's Service maps 53 to it). 0 picks one. */
  dnsPort?: number;
  /** The HTTP proxy's port (CONNECT and absolute-form HTTP). 0 picks one. */
  proxyPort?: number;
  /** Policies from the control plane's database (egressPolicySource). */
  policies: EgressPolicySource;
  /** Denials (and allowed counts) to the control plane (egressDenialSink). */
  sink: EgressDenialSink;
  /** The sandbox whose Pod has address `ip` now (the backend's Pod informer); null: none. */
  sandboxOf(ip: string): string | null;
  /** Resolvers the point asks (default: its Pod's). */
  upstreamDns?: string[];
  /** IPv4 CIDRs upstream connections may go to at all (tests: the fake internet's). */
  upstreamGuard?: string[];
  /** Addresses closed to every sandbox besides the point's own (the control plane's). */
  hostAddresses?: string[];
  /**
   * Credentials injected at egress: bound hosts' TLS is terminated with leaves of this CA (the
   * sandbox Pods trust it: the backend's `egressCa`), as on the local point. Without them every
   * connection is spliced and no value is ever added.
   */
  credentials?: EgressCredentials;
  reportEveryMs?: number;
  onError?: (err: unknown) => void;
}

const NONE: EffectiveEgressPolicy = effectivePolicy('none', { allow: [] }, null, null);

/**
 * PodEgressPoint is the egress point of Kubernetes sandboxes, run by the chart as its own
 * Deployment behind a Service. A sandbox Pod may reach nothing else (the sandbox NetworkPolicy)
 * and is given the point as its resolver (dnsPolicy None) and as HTTP(S)_PROXY. The point names
 * the sandbox by the Pod IP a query or connection comes from, and applies the same SandboxGate
 * as the local point: names decided and answers filtered (rebinding), CONNECT judged by its host
 * and then by the tunnel's SNI (the name must be at the address), plain HTTP by the request's
 * host, every refusal reported. A source that is no sandbox's Pod gets nothing. Credentials
 * bound to hosts are injected as on the local point: a tunnel whose SNI is a bound host is
 * terminated by the same injector (the gate decides), every other one spliced.
 */
export class PodEgressPoint {
  private readonly batcher: DenialBatcher;
  private readonly resolver: UpstreamResolver;
  private readonly gates: SandboxGates;
  private readonly injector: ReturnType<typeof injectorOf>;
  private udp: UdpSocket | null = null;
  private dnsTcp: Server | null = null;
  private proxy: HttpServer | null = null;
  private unsubscribe: (() => Promise<void>) | null = null;

  private constructor(private readonly options: PodEgressPointOptions) {
    this.batcher = new DenialBatcher(
      (batch) =>
        options.sink.report(
          batch.map(({ desktopId, ...rest }) => ({ ...rest, sandboxId: desktopId })),
        ),
      {
        flushMs: options.reportEveryMs ?? 100,
        ...(options.onError ? { onError: options.onError } : {}),
      },
    );
    this.resolver = new UpstreamResolver(options.upstreamDns ?? []);
    const guard = options.upstreamGuard ? cidrMatcher(options.upstreamGuard) : () => true;
    const hostAddresses = [...ownAddresses(), ...(options.hostAddresses ?? [])];
    this.injector = injectorOf(options.credentials);
    const ctx: AttachmentContext = {
      resolver: this.resolver,
      injector: this.injector,
      report: (denial, id) => this.batcher.add({ ...denial, desktopId: id, at: new Date() }),
      isUpstreamAllowed: guard,
    };
    this.gates = new SandboxGates(
      options.policies,
      (id, policy) => new SandboxGate(id, withHostAddresses(policy, hostAddresses), ctx),
      (policy) => withHostAddresses(policy ?? NONE, hostAddresses),
      (err, sandboxId) =>
        options.onError?.(
          err instanceof Error ? new Error(`egress policy of ${sandboxId}: ${err.message}`) : err,
        ),
    );
  }

  /** start listens on the resolver and proxy ports and follows policy changes. */
  static async start(options: PodEgressPointOptions): Promise<PodEgressPoint> {
    const point = new PodEgressPoint(options);
    try {
      await point.listen();
      point.unsubscribe = await options.policies.subscribe(
        (change) => void point.gates.changed(change),
      );
    } catch (err) {
      await point.close();
      throw err;
    }
    return point;
  }

  /** The ports bound (when 0 was asked for). */
  get ports(): { dns: number; proxy: number } {
    return {
      dns: (this.dnsTcp?.address() as AddressInfo | null)?.port ?? 0,
      proxy: (this.proxy?.address() as AddressInfo | null)?.port ?? 0,
    };
  }

  /** flushReports sends pending denials now (tests, shutdown). */
  flushReports(): Promise<void> {
    return this.batcher.flush();
  }

  /** gateOf is the gate of the sandbox whose Pod has `address` (null: none). */
  private readonly gateOf: GateOf = async (address) => {
    const sandboxId = this.sandboxOf(address);
    return sandboxId ? this.gates.gateFor(sandboxId) : null;
  };

  private sandboxOf(address: string | undefined): string | null {
    return address ? this.options.sandboxOf(address.replace(/^::ffff:/, '')) : null;
  }

  private async listen(): Promise<void> {
    const host = this.options.host ?? '0.0.0.0';
    const udp = (this.udp = createSocket('udp4'));
    udp.on('message', (message, peer) => {
      void this.answer(message, peer.address).then((reply) => {
        if (reply) udp.send(reply, peer.port, peer.address);
      });
    });
    udp.on('error', (err) => this.options.onError?.(err));
    const dnsTcp = (this.dnsTcp = createServer((socket) => {
      const address = socket.remoteAddress;
      serveDnsTcp(socket, { answer: (message) => this.answer(message, address) });
    }));
    const proxy = (this.proxy = createHttpServer({ requestTimeout: 0, headersTimeout: 30_000 }));
    proxy.on(
      'connect',
      (req: IncomingMessage, socket: Socket, head: Buffer) =>
        void serveConnect(this.gateOf, req, socket, head).catch(() => socket.destroy()),
    );
    proxy.on(
      'request',
      (req: IncomingMessage, res: ServerResponse) =>
        void serveForward(this.gateOf, req, res).catch(() => res.destroy()),
    );
    proxy.on('clientError', (_err, socket) => socket.destroy());
    await listenOn(
      (ready) => dnsTcp.listen({ port: this.options.dnsPort ?? 5353, host }, ready),
      dnsTcp,
    );
    const dnsPort = (dnsTcp.address() as AddressInfo).port;
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(dnsPort, host, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    await listenOn(
      (ready) => proxy.listen({ port: this.options.proxyPort ?? 3128, host, backlog: 1024 }, ready),
      proxy,
    );
  }

  /** answer serves one DNS query of the sandbox at `address` (REFUSED for any other source). */
  private async answer(message: Buffer, address: string | undefined): Promise<Buffer | null> {
    const sandboxId = this.sandboxOf(address);
    if (!sandboxId) {
      const q = parseQuery(message);
      return q ? buildAnswer(q, DNS_RCODE.REFUSED) : null;
    }
    return (await this.gates.gateFor(sandboxId)).answer(message);
  }

  /** close stops listening, cuts open connections and sends the last denials. */
  async close(): Promise<void> {
    await this.unsubscribe?.();
    this.udp?.close();
    this.proxy?.closeAllConnections();
    await Promise.all(
      [this.dnsTcp, this.proxy].map(
        (server) =>
          new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
      ),
    );
    this.gates.close();
    this.resolver.close();
    this.injector?.close();
    await this.batcher.flush();
  }
}

function listenOn(start: (ready: () => void) => void, server: Server | HttpServer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    start(() => {
      server.off('error', reject);
      resolve();
    });
  });
}
