export {
  API_KEY_PREFIX,
  displayPrefix,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  type GeneratedApiKey,
} from './api-key-secret.js';
export {
  apiKeyView,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  revokeApiKeyAsOperator,
  type CreateApiKeyInput,
} from './api-keys.js';
export {
  auditEventView,
  listAuditEvents,
  writeAuditEvent,
  type AuditActorInput,
  type AuditEventInput,
} from './audit-events.js';
export { createAuditWriter, type AuditWriter } from './audit-writer.js';
export {
  createKeyVerifier,
  type AuthContext,
  type KeyVerifier,
  type KeyVerifierOptions,
} from './key-verifier.js';
export { checkQuota, type CheckQuotaOptions, type QuotaName, type QuotaUsage } from './quotas.js';
export {
  createTenant,
  getTenant,
  listTenants,
  updateTenant,
  tenantView,
  type CreateTenantInput,
  type TenantQuotas,
} from './tenants.js';
