// Importing every schema module registers its named components before the document is built.
import '../errors/index.js';
import '../api/index.js';
import '../guest/index.js';
import { CUBICLE_VERSION } from '../api/system.js';
import { buildOpenApi } from './build-openapi.js';

export { buildOpenApi };

/** openApiDocument is the document the API serves at /docs and the one committed as openapi.json. */
export function openApiDocument(): Record<string, unknown> {
  return buildOpenApi(CUBICLE_VERSION);
}

/** serializeOpenApi is the exact text committed to packages/contract/openapi.json. */
export function serializeOpenApi(): string {
  return JSON.stringify(openApiDocument(), null, 2) + '\n';
}
