import fs from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import { getAbsoluteFSPath } from 'swagger-ui-dist';

const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png']);

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Service API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui', persistAuthorization: true });</script>
</body></html>`;

/** The OpenAPI document and an interactive page served from the swagger-ui-dist package (no CDN). */
export function registerDocsRoutes(router: Router, document: object): void {
  const assetsDir = getAbsoluteFSPath();
  const body = JSON.stringify(document);
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = body;
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html';
    ctx.body = PAGE;
  });
  router.get('/docs/assets/:file', (ctx) => {
    const file = ctx.params.file!;
    if (!ASSETS.has(file)) return; // falls through to the 404 handler
    ctx.type = path.extname(file);
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = fs.createReadStream(path.join(assetsDir, file));
  });
}
