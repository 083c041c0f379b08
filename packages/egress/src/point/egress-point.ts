import { networkInterfaces } from 'node:os';
import type { EffectiveEgressPolicy } from '@cubicle/contract/api';
import { withHostAddresses } from '../policy/index.js';
import { DenialBatcher, type DenialReporter } from './denial-batcher.js';
import {
  DEFAULT_LINK_RANGE,
  parseIpv4,
  parseLinkRange,
  parseNetnsName,
  resolvConf,
  type LinkRange,
} from './link-plan.js';
import { SandboxAttachment } from './sandbox-attachment.js';
import {
  applyRuleset,
  checkRangeFree,
  createSandboxLink,
  destroySandboxLink,
  listSandboxLinks,
  NETNS_DIR,
  sweepSandboxLinks,
} from './sandbox-link.js';
import {
  caBundleWith,
  injectorOf,
  type CredentialInjection,
  type CredentialInjector,
  type EgressCredentials,
} from './inject-credentials.js';
import { SpliceRelay } from './splice-relay.js';
import { UdpDenialWatch } from './udp-denial-watch.js';
import { UpstreamResolver } from './upstream-resolver.js';

export interface EgressPointOptions {
  /** The range sandbox links take their /30s from (CUBICLE_EGRESS_LINK_RANGE). */
  linkRange?: string;
  /** Resolvers the egress resolver asks (default: the host's, from /etc/resolv.conf). */
  upstreamDns?: string[];
  /** Receives denials in batches (collapsed per destination); see denial-batcher.ts. */
  report: DenialReporter;
  /** How often batches go out (ms). */
  reportEveryMs?: number;
  /**
   * IPv4 CIDRs upstream connections may go to at all, whatever a policy says: unset in
   * production; tests and benches set the fake internet's ranges so no bug can send a packet
   * off the machine.
   */
  upstreamGuard?: string[];
  onError?: (err: unknown) => void;
  /**
   * Credentials injected at egress (sandboxes trust the CA through SandboxNetwork.caBundle).
   * Without them no TLS is ever terminated.
   */
  credentials?: EgressCredentials;
  /**
   * The egress relay binary (scripts/tools/egress-relay, built into the tools cache by the
   * bootstrap): spliced connections' bytes move in the kernel. Unset, missing or unable to run
   * here: Node pipes them (measured at about half of direct throughput, see README).
   */
  relay?: string;
}

/** What a sandbox needs to use its link: the namespace to join and its resolv.conf. */
export interface SandboxNetwork {
  /** A network namespace file to join (`nsenter --net=`) before the sandbox starts. */
  netnsPath: string;
  resolvConf: string;
  hostAddress: string;
  sandboxAddress: string;
  /** The sandbox's CA bundle (system + installation CA) when credentials can be injected. */
  caBundle?: string;
  /** The installation CA alone (for the browsers' NSS databases), with caBundle. */
  egressCa?: string;
}

export const cidrMatcher = (cidrs: string[]) => {
  const ranges = cidrs.map((cidr) => {
    const [address, length] = cidr.split('/');
    const base = parseIpv4(address ?? '');
    if (base === null) throw new Error(`upstream guard ${cidr}: not an IPv4 CIDR`);
    return { base, size: 2 ** (32 - Number(length ?? 32)) };
  });
  return (ip: string) => {
    const n = parseIpv4(ip);
    return n !== null && ranges.some((r) => n >= r.base && n < r.base + r.size);
  };
};

/** The host's own addresses: closed to every sandbox like the control plane's (policy floor). */
export const ownAddresses = () =>
  Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && !a.internal)
    .map((a) => a!.address.split('%')[0]!);

/**
 * EgressPoint is the local backend's way out for sandboxes: one per worker process, holding one
 * SandboxAttachment per sandbox whose policy is not `none`. The kernel does the filtering and
 * redirection (nft-ruleset.ts: one table, every link); this process resolves names and splices
 * connections under each sandbox's policy, and reports what it refuses.
 */
export class EgressPoint {
  private readonly attachments = new Map<string, SandboxAttachment>();
  private readonly batcher: DenialBatcher;
  private readonly resolver: UpstreamResolver;
  private readonly udpWatch: UdpDenialWatch;
  private readonly hostAddresses = ownAddresses();
  private readonly injector: CredentialInjector | null;

  private constructor(
    private readonly range: LinkRange,
    private readonly options: EgressPointOptions,
    private readonly relay: SpliceRelay | null,
  ) {
    this.batcher = new DenialBatcher(options.report, {
      flushMs: options.reportEveryMs ?? 100,
      ...(options.onError ? { onError: options.onError } : {}),
    });
    this.resolver = new UpstreamResolver(options.upstreamDns ?? []);
    this.injector = injectorOf(options.credentials);
    this.udpWatch = new UdpDenialWatch((sandboxAddress, ip, port) => {
      for (const attachment of this.attachments.values())
        if (attachment.plan.sandboxAddress === sandboxAddress)
          this.batcher.add({
            desktopId: attachment.desktopId,
            at: new Date(),
            protocol: 'udp',
            name: null,
            ip,
            port,
            rule: 'egress:udp',
            process: null,
          });
    }, options.onError);
  }

  /** start checks the link range is free and installs the host's nftables table. */
  static async start(options: EgressPointOptions): Promise<EgressPoint> {
    const range = parseLinkRange(options.linkRange ?? DEFAULT_LINK_RANGE);
    await checkRangeFree(range);
    await applyRuleset();
    const relay = options.relay ? await SpliceRelay.start(options.relay, options.onError) : null;
    return new EgressPoint(range, options, relay);
  }

  private policyFor(policy: EffectiveEgressPolicy): EffectiveEgressPolicy {
    return withHostAddresses(policy, this.hostAddresses);
  }

  /**
   * attach makes desktop `desktopId`'s link and starts serving it under `policy`; `adopt` keeps
   * a link that already exists (a restarted worker taking its running sandboxes back).
   */
  async attach(
    desktopId: string,
    policy: EffectiveEgressPolicy,
    { adopt = false, injections = [] as CredentialInjection[] } = {},
  ): Promise<SandboxNetwork> {
    await this.attachments.get(desktopId)?.close();
    this.attachments.delete(desktopId);
    const existing = adopt
      ? (await listSandboxLinks(this.range)).find(
          (p) => parseNetnsName(p.netns)?.desktopId === desktopId,
        )
      : undefined;
    const plan = existing ?? (await createSandboxLink(this.range, desktopId));
    try {
      const guard = this.options.upstreamGuard
        ? cidrMatcher(this.options.upstreamGuard)
        : () => true;
      const attachment = await SandboxAttachment.open(desktopId, plan, this.policyFor(policy), {
        resolver: this.resolver,
        injector: this.injector,
        report: (denial, id) => this.batcher.add({ ...denial, desktopId: id, at: new Date() }),
        isUpstreamAllowed: guard,
        relay: this.relay,
      });
      attachment.setInjections(injections);
      this.attachments.set(desktopId, attachment);
      this.udpWatch.setActive(this.attachments.size > 0);
    } catch (err) {
      await destroySandboxLink(plan);
      throw err;
    }
    return {
      netnsPath: `${NETNS_DIR}/${plan.netns}`,
      resolvConf: resolvConf(plan),
      hostAddress: plan.hostAddress,
      sandboxAddress: plan.sandboxAddress,
      ...(this.options.credentials
        ? {
            caBundle: await caBundleWith(this.options.credentials.ca.certPem),
            egressCa: this.options.credentials.ca.certPem,
          }
        : {}),
    };
  }

  /** setPolicy applies a new policy to a running sandbox at once; false when it has no link. */
  setPolicy(desktopId: string, policy: EffectiveEgressPolicy): boolean {
    const attachment = this.attachments.get(desktopId);
    attachment?.setPolicy(this.policyFor(policy));
    return attachment !== undefined;
  }

  /** setInjections replaces the credentials bound for a running sandbox (at once). */
  setInjections(desktopId: string, injections: CredentialInjection[]): boolean {
    const attachment = this.attachments.get(desktopId);
    attachment?.setInjections(injections);
    return attachment !== undefined;
  }

  policyOf(desktopId: string): EffectiveEgressPolicy | null {
    return this.attachments.get(desktopId)?.currentPolicy ?? null;
  }

  /** detach stops serving a sandbox and removes its link (idempotent). */
  async detach(desktopId: string): Promise<void> {
    const attachment = this.attachments.get(desktopId);
    this.attachments.delete(desktopId);
    this.udpWatch.setActive(this.attachments.size > 0);
    await attachment?.close();
    const plan =
      attachment?.plan ??
      (await listSandboxLinks(this.range)).find(
        (p) => parseNetnsName(p.netns)?.desktopId === desktopId,
      );
    if (plan) await destroySandboxLink(plan);
  }

  /** relayed: spliced connections' bytes move through the kernel-assisted relay now. */
  get relayed(): boolean {
    return this.relay?.isAlive ?? false;
  }

  /** isAttached: the point serves desktop `desktopId`'s link now. */
  isAttached(desktopId: string): boolean {
    return this.attachments.has(desktopId);
  }

  /** linkedDesktops lists the desktops whose link exists on this machine (served or not). */
  async linkedDesktops(): Promise<string[]> {
    return (await listSandboxLinks(this.range)).map(
      (plan) => parseNetnsName(plan.netns)!.desktopId,
    );
  }

  /** sweep removes links of desktops of `prefix` that are gone (after a crash). */
  sweep(prefix: string, isLive: (desktopId: string) => boolean): Promise<string[]> {
    return sweepSandboxLinks(this.range, prefix, (id) => this.attachments.has(id) || isLive(id));
  }

  /** flushReports sends pending denials now (tests, shutdown). */
  flushReports(): Promise<void> {
    return this.udpWatch.poll().then(() => this.batcher.flush());
  }

  /**
   * close stops serving every sandbox but leaves their links (the sandboxes keep running; a
   * new egress point adopts them), then sends the last denials.
   */
  async close(): Promise<void> {
    this.udpWatch.setActive(false);
    await Promise.all([...this.attachments.values()].map((a) => a.close()));
    this.attachments.clear();
    this.resolver.close();
    this.injector?.close();
    this.relay?.close();
    await this.batcher.flush();
  }
}
