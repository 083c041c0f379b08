// The committed packages/contract/openapi.json, read once for the suites that build requests from
// it (api-fuzz, document-agreement); each names the operation shape it reads.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { JsonSchema } from './schema-arbitrary.js';

const documentPath = fileURLToPath(
  new URL('../../../../packages/contract/openapi.json', import.meta.url),
);

export interface CommittedDocument<Op> {
  paths: Record<string, Record<string, Op>>;
  components: { schemas: Record<string, JsonSchema> };
}

/** committedDocument is the document and its operations as `{path, METHOD, op}`, in document order. */
export function committedDocument<Op>() {
  const doc = JSON.parse(readFileSync(documentPath, 'utf8')) as CommittedDocument<Op>;
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );
  return { doc, operations };
}
