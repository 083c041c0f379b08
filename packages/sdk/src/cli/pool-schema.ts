// The contract's schemas the CLI checks a pools file with before it changes anything. The SDK
// publishes no dependency on the private contract: the package build replaces this module's
// dist/cli/pool-schema.js with a self-contained bundle of the same exports (zod included), made
// by scripts/bundle-cli-schemas.mjs; in the repository it is the contract itself.
export { PoolSpec, ResourceName } from '@cubicle/contract/api';
