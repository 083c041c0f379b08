import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';

// Swagger UI is served from its npm package (swagger-ui-dist, pinned in package.json), never a
// CDN: the reference works offline and the page's CSP can stay 'self'.
const require = createRequire(import.meta.url);
const uiDir = dirname(require.resolve('swagger-ui-dist/package.json'));

/** ASSETS: the only files of the package served, with their types. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/**
 * DOCS_CSP lets the page load only its own scripts and styles and call only this API ("Try it
 * out"). Swagger UI sets inline styles on elements and shows data: images, hence those two.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Cubicle API reference</title>
<link rel="icon" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// A file, not an inline script, so the CSP needs no 'unsafe-inline' for scripts.
const INIT = `window.ui = SwaggerUIBundle({
  url: '/docs/openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'BaseLayout',
  persistAuthorization: false,
  tryItOutEnabled: false,
});
`;

/**
 * registerDocsRoutes serves the interactive API reference at /docs and the OpenAPI document at
 * /docs/openapi.json (what tools expect). Assets are read once, at registration.
 */
export function registerDocsRoutes(app: FastifyInstance, openApi: () => unknown) {
  const files = new Map(
    Object.entries(ASSETS).map(([name, type]) => [
      name,
      { type, body: readFileSync(join(uiDir, name)) },
    ]),
  );
  const secure = { 'content-security-policy': DOCS_CSP, 'x-content-type-options': 'nosniff' };

  app.get('/docs/openapi.json', async () => openApi());
  app.get('/docs', async (_request, reply) =>
    reply.headers(secure).type('text/html; charset=utf-8').send(PAGE),
  );
  app.get('/docs/init.js', async (_request, reply) =>
    reply.headers(secure).type('text/javascript; charset=utf-8').send(INIT),
  );
  app.get<{ Params: { file: string } }>('/docs/assets/:file', async (request, reply) => {
    const file = files.get(request.params.file);
    if (!file) return reply.callNotFound();
    return reply
      .headers({ ...secure, 'cache-control': 'public, max-age=86400' })
      .type(file.type)
      .send(file.body);
  });
}
