import type { Db } from '@cubicle/db';
import type { Backends } from './backend/types.js';
import type { Enqueue, RunRedis, ViewerEvents } from './context.js';
import type { Keyring } from './crypto/keyring.js';
import type { InstallationDefault, OperatorRanges } from '@cubicle/egress';
import type { ObjectStore } from '@cubicle/object-store';
import {
  createControlPlaneObjects,
  type ControlPlaneObjects,
} from './objects/control-plane-objects.js';

// The process's shared parts, built once per control plane (createResources), and the narrow
// views of them each system's functions take. Like a run engine's "system resources": every
// system is handed what it uses explicitly, and what a system keeps between calls (a group
// commit, a debounce) belongs to the resources it was made from, never to the module, so two
// control planes in one process (the tests start several apps) share nothing by accident.

/** WebhookRetryPolicy: exponential backoff from `baseMs`, each gap capped, for `windowMs` after the event. */
export interface WebhookRetryPolicy {
  baseMs: number;
  windowMs: number;
  /** The longest gap between two attempts. */
  maxGapMs: number;
}

/** Webhook settings of the operator; the worker's defaults are in webhooks/deliver-webhook.ts. */
export interface WebhookDeliveryOptions {
  /** Operator setting (CUBICLE_WEBHOOKS_ALLOW_PRIVATE): deliver to private and loopback addresses. */
  allowPrivate: boolean;
  /** Bound of one attempt: resolution, connection, request and the response excerpt. */
  timeoutMs: number;
  retry: WebhookRetryPolicy;
}

/**
 * Resources are one control plane's shared parts: connections, clock, keyring, backends and the
 * operator's settings, plus the devices made from them. The API and the worker each make one
 * with createResources and hand it (or a narrow view of it, below) to every service.
 */
export interface Resources {
  db: Db;
  /** Where services enqueue worker jobs (a JobQueues in production). */
  queues: Enqueue;
  /** Publishes run events and holds run input lists; also publishes viewer revocations. */
  redis: RunRedis;
  /** The BullMQ prefix; scopes every queue, channel and key. */
  prefix: string;
  /** Seals guest tokens, secrets and webhook signing secrets at rest. */
  keyring: Keyring;
  /** The sandbox backends this process drives (the API drives none). */
  backends: Backends;
  /** Where claim ends are announced so open viewer streams close (without: on their re-check). */
  events: ViewerEvents;
  /** The injectable clock: tests move time; production uses Date.now. */
  now?: (() => Date) | undefined;
  webhooks: Partial<WebhookDeliveryOptions>;
  /** The operator's egress settings (installation default, operator ranges); default: none, no ranges. */
  egress?: EgressInstallation | undefined;
  /** The stateful parts this control plane owns (claim batcher, event committer, nudges). */
  devices: Devices;
  /**
   * The object store (CUBICLE_OBJECT_STORE): `objects.forTenant(tenantId)` is one tenant's sealed
   * view (profiles, snapshots, recordings); made by createResources from `objectStore`.
   */
  objects: ControlPlaneObjects;
}

/**
 * EgressInstallation is the operator's side of egress (env CUBICLE_EGRESS_DEFAULT,
 * CUBICLE_EGRESS_OPERATOR_ALLOW, CUBICLE_EGRESS_HOST_ADDRESSES; Helm `egress.*`): what a pool
 * without its own policy gets, and which ranges of the closed floor are opened. Never a tenant's.
 */
export interface EgressInstallation {
  default: InstallationDefault;
  operator: OperatorRanges;
}

/** The parts createResources is given: everything but the devices, which it makes. */
export type ResourceParts = Omit<
  Resources,
  'devices' | 'backends' | 'webhooks' | 'events' | 'objects'
> &
  Partial<Pick<Resources, 'backends' | 'webhooks'>> & {
    /** createObjectStore's store; without one, every object call fails `object_store_unavailable`. */
    objectStore?: ObjectStore | undefined;
  };

/**
 * createResources assembles one control plane's resources from the connections its process
 * opened (it opens and closes nothing). Viewer revocations go out on `redis` under `prefix`, as
 * both processes announced them before. Call it once per process (per app in tests): devices are
 * per Resources, so a second call is a second control plane with batches of its own.
 */
export function createResources({ objectStore, ...parts }: ResourceParts): Resources {
  const resources: Resources = {
    backends: {},
    webhooks: {},
    ...parts,
    events: { publisher: parts.redis, prefix: parts.prefix },
    objects: createControlPlaneObjects(objectStore, parts),
    devices: devicesOf(() => resources),
  };
  return resources;
}

/**
 * A Device is a stateful part a control plane owns, made from its resources: a group commit, a
 * debounce. Each floor defines its own (defineDevice); the instance lives in the Devices of one
 * Resources. The root floor cannot name the types of the floors above it, hence a definition
 * each floor hands in rather than a field per device here.
 */
export interface Device<T> {
  readonly name: string;
  make(resources: Resources): T;
}

/** defineDevice names a device and how it is made; its instance is made once per Resources. */
export const defineDevice = <T>(name: string, make: (resources: Resources) => T): Device<T> => ({
  name,
  make,
});

/**
 * Devices hold one Resources' device instances, each made on first use from those resources (not
 * from a caller's copy: a view spread with another database still commits on this one's).
 */
export interface Devices {
  of<T>(device: Device<T>): T;
}

function devicesOf(resources: () => Resources): Devices {
  const made = new Map<Device<unknown>, unknown>();
  return {
    of<T>(device: Device<T>): T {
      if (made.has(device)) return made.get(device) as T;
      const instance = device.make(resources());
      made.set(device, instance);
      return instance;
    },
  };
}

// The narrow views: a function names the parts it uses. Declared here only, so a view is
// always a Pick of the one Resources type, never a bag of its own.

/** Deps are what most services take: the database, the queues, the clock and the devices. */
export type Deps = Pick<Resources, 'db' | 'queues' | 'devices'> &
  Partial<Pick<Resources, 'now' | 'events'>>;

/** DbDeps: services that only read or write rows, on the clock (usage, queries of record). */
export type DbDeps = Pick<Resources, 'db'> & Partial<Pick<Resources, 'now'>>;

/** OutboxDeps: services that write rows and enqueue their follow-up (the webhook outbox). */
export type OutboxDeps = Pick<Resources, 'db' | 'queues'> & Partial<Pick<Resources, 'now'>>;

/** WorkerDeps add what the worker drives sandboxes and opens guest tokens with. */
export type WorkerDeps = Deps & Pick<Resources, 'backends' | 'keyring'>;

/** SecretsDeps: services that seal values need the keyring besides the usual deps. */
export type SecretsDeps = Deps & Pick<Resources, 'keyring'>;

/** RunDeps add Redis (events, input) and its prefix; the keyring keys run idempotency hashes. */
export type RunDeps = Deps &
  Pick<Resources, 'redis' | 'prefix'> &
  Partial<Pick<Resources, 'keyring'>>;

/** GuestClientDeps: the guest door reads the claim's sandbox and opens its token. */
export type GuestClientDeps = Pick<Resources, 'db' | 'keyring'>;

/** WebhookApiDeps: webhook management seals signing secrets and checks addresses. */
export type WebhookApiDeps = Pick<Resources, 'db' | 'keyring'> &
  Partial<Pick<Resources, 'now' | 'webhooks'>>;

/** ObjectDeps: services that keep objects (profiles, snapshots, recordings) in the tenant's store. */
export type ObjectDeps = Pick<Resources, 'objects'>;

/** WebhookWorkerDeps: delivery opens signing secrets and enqueues the next attempt. */
export type WebhookWorkerDeps = Pick<Resources, 'db' | 'queues' | 'keyring'> &
  Partial<Pick<Resources, 'now' | 'webhooks'>>;
