import type { RouteDef } from '@cubicle/contract/api';

export interface AuditAction {
  /** `resource.verb`, e.g. `pool.apply`. */
  action: string;
  /** The resource, e.g. `pool`, `api_key`. */
  targetType: string;
}

/**
 * Operation ids that do not read as verb + resource. Everything else is derived:
 * `applyPool` → `pool.apply`, `createViewerTicket` → `viewer_ticket.create`.
 */
export const auditActionOverrides: Record<string, AuditAction> = {
  rotateWebhookSecret: { action: 'webhook.rotate_secret', targetType: 'webhook' },
};

const VERB_NOUN = /^([a-z]+)([A-Z][A-Za-z]*)$/;

/** auditActionFor names a route's audit action, from the overrides or its operationId. */
export function auditActionFor(def: Pick<RouteDef, 'operationId'>): AuditAction {
  const override = auditActionOverrides[def.operationId];
  if (override) return override;
  const m = VERB_NOUN.exec(def.operationId);
  if (!m) throw new Error(`cannot derive an audit action from operationId ${def.operationId}`);
  const targetType = m[2]!.replace(/(?<!^)([A-Z])/g, '_$1').toLowerCase();
  return { action: `${targetType}.${m[1]}`, targetType };
}

/** isMutating: the methods whose calls are audited. */
export function isMutating(method: string): boolean {
  return method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE';
}

/**
 * pathTarget is the audit target id a request's path names: its last path parameter, the most
 * specific resource (`/claims/{id}/secrets/{secret_id}` → the secret). A path that goes on past
 * it (`/claims/{id}/shell`, `/webhooks/{id}/rotate-secret`) still acts on that resource, so its
 * id is the target; only a path without parameters (`POST /v1/pools`-like creates, answered with
 * the new id instead) has none. Target ids are ids, never a type name.
 */
export function pathTarget(def: Pick<RouteDef, 'path'>, params: unknown): string | null {
  const last = [...def.path.matchAll(/\{([a-zA-Z_]+)\}/g)].at(-1)?.[1];
  if (!last) return null;
  const value = (params as Record<string, unknown> | undefined)?.[last];
  return typeof value === 'string' ? value.slice(0, 200) : null;
}
