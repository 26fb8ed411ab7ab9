import type Koa from 'koa';
import { escapeHtml } from '../../domain/cards';

// A person who opens a share link or a card image in a browser never sees raw JSON: an error on those
// public paths becomes a small HTML page when the request prefers HTML (a browser navigating sends
// Accept: text/html,…). API clients (Accept: application/json, */*, or none) keep the JSON body.

const PERSON_FACING = /^\/(share|media)\//;

const TITLES: Record<number, string> = {
  404: 'This link is not available',
  410: 'This link is not available',
  429: 'Too many requests',
};

const MESSAGES: Record<number, string> = {
  404: 'The card you are looking for does not exist, or its link was revoked or has expired. Ask its owner for a new link.',
  410: 'The card you are looking for does not exist, or its link was revoked or has expired. Ask its owner for a new link.',
  429: 'Too many requests came from your network. Please wait a minute and try again.',
};

export function errorPage(status: number, retryAfter?: string): string {
  const title = TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'This request could not be completed');
  const message = MESSAGES[status] ?? (status >= 500 ? 'Please try again in a little while.' : 'Please check the link and try again.');
  const wait = status === 429 && retryAfter ? ` (about ${escapeHtml(retryAfter)} seconds)` : '';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{margin:0;font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Arial,sans-serif;background:#f3f4f6;color:#111827}
main{max-width:420px;margin:15vh auto 0;padding:24px;background:#fff;border-radius:16px;box-shadow:0 1px 3px rgba(0,0,0,.1)}
h1{font-size:20px;margin:0 0 8px}p{margin:0;line-height:1.5;color:#374151}</style></head>
<body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}${wait}</p></main></body></html>`;
}

/** Once the error's answer is set: turns its JSON error on a person-facing GET into a page, status kept. */
export function answerErrorAsPage(ctx: Koa.Context): void {
  if (ctx.status < 400 || !PERSON_FACING.test(ctx.path) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return;
  if (ctx.accepts('json', 'html') !== 'html') return;
  const status = ctx.status;
  ctx.body = errorPage(status, ctx.response.get('Retry-After') || undefined);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'");
  ctx.set('Cache-Control', 'no-store');
}
