import type Koa from 'koa';
import { z } from 'zod';
import { isDomainError } from '../../domain/errors';
import * as unsub from '../../services/outreach/unsubscribe';
import type { AppDeps } from '../deps';
import { readRawBody } from '../middleware/raw-body';
import { reply, type Routes } from '../route';
import { ErrorBody, validationError } from '../schemas/common';
import { IGNORED_QUERY_NOTE, IgnoredQuery, QUERY_NOT_UTF8 } from '../schemas/outreach-tracking';
import { UnsubscribeAnswer, UnsubscribeForm, UnsubscribeParams } from '../schemas/outreach-unsubscribe';
import { registerOutreachTrackingRoutes } from './outreach-tracking';

// The unsubscribe link of every sequence step (RFC 8058), reached without a token: the path's token is
// the capability. A GET shows a confirmation page only; the POST (one click from the mail client, or the
// page's button) unsubscribes.

const TAG = 'Outreach' as const;
const PUBLIC_HEADERS = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff' };
// A person who follows the link (Accept: text/html) gets the unknown-link 404 and the 429 as a page; an
// API client keeps the JSON body, as on the card share pages.
const errors = {
  ...QUERY_NOT_UTF8,
  404: {
    description: 'Unknown token (every unknown token answers the same); a small HTML page when the request prefers text/html',
    schema: z.string(),
    contentType: 'text/html',
    json: ErrorBody,
  },
  429: {
    description:
      'Too many requests for this link (OUTREACH_UNSUBSCRIBE_PER_TOKEN a window); retry after Retry-After seconds (an HTML page when the request prefers text/html)',
    schema: z.string(),
    contentType: 'text/html',
    json: ErrorBody,
    headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' as const } } },
  },
  ...validationError,
} as const;

const PAGE_HEADERS = { ...PUBLIC_HEADERS, 'Content-Security-Policy': unsub.UNSUBSCRIBE_PAGE_CSP };
const prefersHtml = (ctx: Koa.Context) => ctx.accepts('json', 'html') === 'html';

/** Runs the call; its unknown-link and rate-limit refusals become a page for a browser, JSON otherwise. */
async function asPageForBrowsers<T>(ctx: Koa.Context, call: () => Promise<T>) {
  try {
    return { ok: true as const, value: await call() };
  } catch (error) {
    if (!prefersHtml(ctx) || !(isDomainError(error, 'not_found') || isDomainError(error, 'rate_limited'))) throw error;
    const status = error.kind === 'not_found' ? (404 as const) : (429 as const);
    const headers: Record<string, string> =
      error.retryAfterSeconds !== undefined ? { ...PAGE_HEADERS, 'Retry-After': String(Math.ceil(error.retryAfterSeconds)) } : PAGE_HEADERS;
    return {
      ok: false as const,
      reply: reply(status, unsub.unsubscribeErrorPage(status, error.retryAfterSeconds), headers, 'text/html; charset=utf-8'),
    };
  }
}

export function registerOutreachUnsubscribeRoutes(routes: Routes, deps: AppDeps): void {
  const publicDeps = { sql: deps.sql, limiter: unsub.createUnsubscribeLimiter(deps.config) };

  routes.add({
    method: 'get',
    path: '/outreach/unsubscribe/{token}',
    tag: TAG,
    summary: 'The unsubscribe confirmation page (HTML with a button that POSTs); a GET changes nothing',
    description: IGNORED_QUERY_NOTE,
    auth: 'public',
    params: UnsubscribeParams,
    query: IgnoredQuery,
    responses: { 200: { description: 'HTML page', schema: z.string(), contentType: 'text/html' }, ...errors },
    handler: async ({ params, ctx }) => {
      const page = await asPageForBrowsers(ctx, () => unsub.unsubscribePage(publicDeps, params.token));
      if (!page.ok) return page.reply;
      return reply(200, page.value, PAGE_HEADERS, 'text/html; charset=utf-8');
    },
  });

  routes.add({
    method: 'post',
    path: '/outreach/unsubscribe/{token}',
    tag: TAG,
    summary: 'One-click unsubscribe (RFC 8058): lists the address (reason unsubscribe) and stops the enrollment; idempotent',
    description: IGNORED_QUERY_NOTE,
    auth: 'public',
    params: UnsubscribeParams,
    query: IgnoredQuery,
    documented: { body: UnsubscribeForm, bodyContentTypes: ['application/x-www-form-urlencoded'] },
    responses: {
      200: {
        description: 'Unsubscribed (also when already): JSON, or a small HTML page when the request prefers text/html',
        schema: z.string(),
        contentType: 'text/html',
        json: UnsubscribeAnswer,
      },
      413: { description: `Body larger than ${unsub.UNSUBSCRIBE_BODY_LIMIT_BYTES} bytes`, schema: ErrorBody },
      ...errors,
    },
    handler: async ({ params, ctx }) => {
      // The body says nothing the path does not: read (bounded) and dropped.
      await readRawBody(ctx, unsub.UNSUBSCRIBE_BODY_LIMIT_BYTES);
      const done = await asPageForBrowsers(ctx, () => unsub.unsubscribe(publicDeps, params.token));
      if (!done.ok) return done.reply;
      if (prefersHtml(ctx)) return reply(200, done.value.html, PAGE_HEADERS, 'text/html; charset=utf-8');
      return reply(200, done.value.answer, PUBLIC_HEADERS);
    },
  });

  // The open pixel and the link redirects of tracked steps: the other public addresses a sent step names.
  registerOutreachTrackingRoutes(routes, deps);
}
