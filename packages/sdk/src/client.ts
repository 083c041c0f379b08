import { ApiKeys, AuditEvents, TenantApi, UsageApi, Webhooks } from './admin.js';
import type { OperationName, ResponseOf } from './operations.js';
import { Claims, Pools, Runs, Secrets, ViewerTickets } from './resources.js';
import { Profiles, ReplayLinks, Snapshots } from './stored-state.js';
import {
  Transport,
  type CallOptions,
  type ClientOptions,
  type OperationInput,
} from './transport.js';

/**
 * Cubicle is the client: `new Cubicle()` reads `CUBICLE_API_KEY` and `CUBICLE_URL`, or
 * `new Cubicle({ apiKey, baseUrl })` says them. Every method is one operation of the contract's
 * route table, typed from its schemas; lists are async iterators; mutating calls carry an
 * Idempotency-Key kept across their retries. `CUBICLE_LOG=debug` (or `logger`) logs each request.
 */
export class Cubicle {
  readonly transport: Transport;
  readonly pools: Pools;
  readonly claims: Claims;
  readonly viewerTickets: ViewerTickets;
  readonly runs: Runs;
  readonly secrets: Secrets;
  readonly tenant: TenantApi;
  readonly apiKeys: ApiKeys;
  readonly auditEvents: AuditEvents;
  readonly webhooks: Webhooks;
  readonly usage: UsageApi;
  readonly profiles: Profiles;
  readonly snapshots: Snapshots;
  readonly replayLinks: ReplayLinks;

  constructor(options: ClientOptions = {}) {
    this.transport = new Transport(options);
    this.pools = new Pools(this.transport);
    this.claims = new Claims(this.transport);
    this.viewerTickets = new ViewerTickets(this.transport);
    this.runs = new Runs(this.transport);
    this.secrets = new Secrets(this.transport);
    this.tenant = new TenantApi(this.transport);
    this.apiKeys = new ApiKeys(this.transport);
    this.auditEvents = new AuditEvents(this.transport);
    this.webhooks = new Webhooks(this.transport);
    this.profiles = new Profiles(this.transport);
    this.snapshots = new Snapshots(this.transport);
    this.replayLinks = new ReplayLinks(this.transport);
    this.usage = new UsageApi(this.transport);
  }

  /** request calls any operation by its contract name: the typed escape hatch under every method. */
  request<K extends OperationName>(
    name: K,
    input?: OperationInput<K>,
    options?: CallOptions,
  ): Promise<ResponseOf<K>> {
    return this.transport.call(name, input, options);
  }

  health(options?: CallOptions) {
    return this.transport.call('healthz', {}, options);
  }

  version(options?: CallOptions) {
    return this.transport.call('version', {}, options);
  }
}
