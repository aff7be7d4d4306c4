import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Router, type Response } from 'express';
import { crdDocument, documentText, platformDocument } from './documents.js';

/**
 * The API documents, served without authentication at stable paths, and a page that renders them (Swagger UI from
 * the swagger-ui-dist package: nothing is fetched from outside the server, which the page's CSP also enforces).
 */
export const API_DOCS_PATHS = {
  page: '/api-docs/',
  platform: '/api-docs/platform.json',
  crds: '/api-docs/crds.json',
} as const;

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/** Only the files the page loads: the package also holds a demo page that points at a public petstore. */
const SWAGGER_UI_FILES = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
]);

const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI (React) sets style attributes
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>kapi API documents</title>
  <link rel="stylesheet" href="/api-docs/swagger-ui/swagger-ui.css">
  <link rel="icon" type="image/png" href="/api-docs/swagger-ui/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/api-docs/swagger-ui/swagger-ui-bundle.js"></script>
  <script src="/api-docs/swagger-ui/swagger-ui-standalone-preset.js"></script>
  <script src="/api-docs/swagger-initializer.js"></script>
</body>
</html>
`;

const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    urls: [
      { url: ${JSON.stringify(API_DOCS_PATHS.platform)}, name: 'kapi platform API (/oauth, /kapis)' },
      { url: ${JSON.stringify(API_DOCS_PATHS.crds)}, name: 'kapi custom resources (/apis)' },
    ],
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;

export function apiDocsRoutes(): Router {
  const router = Router();
  // Built on first use, then kept: both depend only on the code and crds/.
  let platform: string | undefined;
  let crds: string | undefined;

  // Express matches /api-docs and /api-docs/ alike: the page needs the slash for its own address.
  router.get('/api-docs', (req, res) => {
    if (!req.originalUrl.split('?')[0]!.endsWith('/')) {
      res.redirect(301, API_DOCS_PATHS.page);
      return;
    }
    res.setHeader('Content-Security-Policy', PAGE_POLICY);
    res.type('html').send(PAGE);
  });
  router.get('/api-docs/swagger-initializer.js', (_req, res) => {
    res.type('js').send(INITIALIZER);
  });
  router.get(API_DOCS_PATHS.platform, (_req, res) => sendJson(res, (platform ??= documentText(platformDocument()))));
  router.get(API_DOCS_PATHS.crds, (_req, res) => sendJson(res, (crds ??= documentText(crdDocument()))));
  router.get('/api-docs/swagger-ui/:file', (req, res, next) => {
    const file = String(req.params['file']);
    if (!SWAGGER_UI_FILES.has(file)) {
      next();
      return;
    }
    res.sendFile(file, { root: SWAGGER_UI_DIR, maxAge: '1h' });
  });
  return router;
}

function sendJson(res: Response, text: string): void {
  res.setHeader('Cache-Control', 'no-cache');
  res.type('application/json').send(text);
}
