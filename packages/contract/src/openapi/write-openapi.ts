// Regenerates packages/contract/openapi.json (run: npm run openapi). A unit test fails when the
// committed file differs from what the schemas produce.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serializeOpenApi } from './index.js';

const target = fileURLToPath(new URL('../../openapi.json', import.meta.url));
writeFileSync(target, serializeOpenApi());
process.stdout.write(`wrote ${target}\n`);
