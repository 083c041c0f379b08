#!/usr/bin/env node
// The Kubernetes egress point: the chart's egress Deployment runs this entry of the worker image
// (a subset of the worker's configuration: egress-point/env.ts). Sandbox Pods reach the web only through it — it is their
// resolver and HTTP(S) proxy, and the sandbox NetworkPolicy admits nothing else — and it applies
// each sandbox's policy from the database (@cubicle/egress PodEgressPoint), naming the sandbox by
// the Pod IP it comes from (the backend's Pod informer). Denials go to the control plane's sink:
// the same egress-events, live stream, webhooks, audit and usage as local desktops'.
import { createKubeClient, loadKubeConfig, startPodAddressBook } from '@cubicle/backends';
import {
  egressCredentialsOf,
  egressDenialSink,
  egressInstallationOf,
  egressPolicySource,
  parseKeyring,
  secretLogHooks,
} from '@cubicle/control-plane';
import { createDb, pingDatabase } from '@cubicle/db';
import { PodEgressPoint } from '@cubicle/egress';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import { pino } from 'pino';
import { closeOnSignals, OwnedResources } from '../owned-resources.js';
import { loadEgressPointEnv } from './env.js';

const env = loadEgressPointEnv();
const log = pino({
  level: env.LOG_LEVEL,
  base: { service: 'cubicle-egress-point' },
  hooks: secretLogHooks(),
});
const warn = (what: string) => (err: unknown) =>
  log.warn({ err: err instanceof Error ? err.message : String(err) }, what);

const owned = new OwnedResources(log);
const db = owned.own('postgres', createDb({ databaseUrl: env.DATABASE_URL }), (d) =>
  d.$disconnect(),
);
await pingDatabase(db);
const connection = owned.own('redis', createQueueConnection(env.REDIS_URL), (c) => c.disconnect());
const subscriber = owned.own('egress subscriber', createQueueConnection(env.REDIS_URL), (c) =>
  c.disconnect(),
);
const queues = owned.own('queues', new JobQueues(connection, env.QUEUE_PREFIX), (q) => q.close());
const client = owned.own(
  'kube client',
  createKubeClient(
    loadKubeConfig({ kubeconfigPath: env.KUBECONFIG, serviceHost: env.KUBERNETES_SERVICE_HOST }),
  ),
  (c) => c.close(),
);
const pods = owned.own(
  'pod informer',
  startPodAddressBook({
    client,
    namespace: env.KUBE_NAMESPACE,
    onWarning: (msg, err) => warn(msg)(err),
  }),
  (book) => book.stop(),
);
await pods.synced(AbortSignal.timeout(60_000));
// Credentials injected at egress: the keyring opens the tenant's secrets bound to hosts (loaded
// with each claimed sandbox's policy) and the installation CA's key, as the worker's local point
// does. An unavailable CA leaves the point serving, injecting nothing (TLS never terminated).
const keyring = parseKeyring(env.CUBICLE_KEYRING);
const credentials = await egressCredentialsOf(
  { db, keyring },
  { inject: env.CUBICLE_EGRESS_INJECT, upstreamCaPath: env.CUBICLE_EGRESS_UPSTREAM_CA },
).catch((err: unknown) => {
  log.error(
    { err: err instanceof Error ? err.message : String(err) },
    'the egress CA is unavailable: credentials bound to hosts are not injected',
  );
  return undefined;
});
const policies = egressPolicySource({
  db,
  ...(credentials && { keyring }),
  egress: egressInstallationOf(env),
  subscriber,
  prefix: env.QUEUE_PREFIX,
});
const point = await PodEgressPoint.start({
  host: env.CUBICLE_EGRESS_POINT_HOST,
  dnsPort: env.KUBE_EGRESS_POINT_DNS_PORT,
  proxyPort: env.KUBE_EGRESS_POINT_PROXY_PORT,
  policies,
  sink: egressDenialSink({
    db,
    queues,
    events: { publisher: connection, prefix: env.QUEUE_PREFIX },
  }),
  sandboxOf: (ip) => pods.sandboxOf(ip),
  upstreamDns: env.CUBICLE_EGRESS_UPSTREAM_DNS,
  ...(env.CUBICLE_EGRESS_UPSTREAM_GUARD && { upstreamGuard: env.CUBICLE_EGRESS_UPSTREAM_GUARD }),
  hostAddresses: env.CUBICLE_EGRESS_HOST_ADDRESSES,
  ...(credentials && { credentials }),
  onError: warn('egress point'),
});
owned.own('egress point', point, (p) => p.close());
log.info({ ports: point.ports, namespace: env.KUBE_NAMESPACE }, 'egress point started');

closeOnSignals(owned, log, { graceMs: 10_000 });
