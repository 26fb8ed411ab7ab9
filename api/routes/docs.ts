import fs from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import { publicBaseUrl, type Config } from '../../platform/core/config';

const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png']);

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Service API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui', persistAuthorization: true });</script>
</body></html>`;

const WEBSITE_MARK = '\u0000website\u0000'; // no string of the document contains U+0000

/**
 * The OpenAPI document and an interactive page served from the swagger-ui-dist package (no CDN). The
 * document's contact URL (the page's "Website" link) is this server's /docs: under PUBLIC_BASE_URL when
 * set (the address behind a proxy), else at the origin (scheme and Host) the document was requested at.
 */
export function registerDocsRoutes(
  router: Router,
  document: { info: { contact?: object } },
  config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>,
): void {
  const assetsDir = getAbsoluteFSPath();
  // Serialized once around a mark, so each answer only splices its own URL in.
  const text = JSON.stringify({ ...document, info: { ...document.info, contact: { ...document.info.contact, url: WEBSITE_MARK } } });
  const [head, tail, ...more] = text.split(JSON.stringify(WEBSITE_MARK));
  if (tail === undefined || more.length > 0) throw new Error('the OpenAPI document could not be prepared for serving');
  const fallback = publicBaseUrl(config);
  router.get('/openapi.json', (ctx) => {
    const base = config.PUBLIC_BASE_URL ?? (ctx.host ? `${ctx.protocol}://${ctx.host}` : fallback);
    ctx.type = 'application/json';
    ctx.body = head! + JSON.stringify(`${base.replace(/\/+$/, '')}/docs`) + tail;
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
