export { createControlPlaneObjects, type ControlPlaneObjects } from './control-plane-objects.js';
export { createTenantDataKeys } from './tenant-data-keys.js';
export {
  objectStoreConfigOf,
  objectStoreEnvFields,
  objectStoreEnvIssues,
  checkObjectStoreEnv,
  objectStoreOf,
} from './object-store-env.js';
