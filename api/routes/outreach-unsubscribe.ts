import { z } from 'zod';
import * as unsub from '../../services/outreach-unsubscribe';
import type { AppDeps } from '../deps';
import { clientAddress } from '../middleware/client-address';
import { readRawBody } from '../middleware/raw-body';
import { reply, type Routes } from '../route';
import { ErrorBody, validationError } from '../schemas/common';
import { UnsubscribeAnswer, UnsubscribeForm, UnsubscribeParams } from '../schemas/outreach-unsubscribe';

// The unsubscribe link of every sequence step (RFC 8058), reached without a token: the path's token is
// the capability. A GET shows a confirmation page only; the POST (one click from the mail client, or the
// page's button) unsubscribes.

const TAG = 'Outreach' as const;
const PUBLIC_HEADERS = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff' };
const errors = {
  404: { description: 'Unknown token (every unknown token answers the same)', schema: ErrorBody },
  429: {
    description: 'Too many requests from this address; retry after Retry-After seconds',
    schema: ErrorBody,
    headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' as const } } },
  },
  ...validationError,
} as const;

export function registerOutreachUnsubscribeRoutes(routes: Routes, deps: AppDeps): void {
  const publicDeps = { sql: deps.sql, limiter: unsub.createUnsubscribeLimiter(deps.config) };

  routes.add({
    method: 'get',
    path: '/outreach/unsubscribe/{token}',
    tag: TAG,
    summary: 'The unsubscribe confirmation page (HTML with a button that POSTs); a GET changes nothing',
    auth: 'public',
    params: UnsubscribeParams,
    responses: { 200: { description: 'HTML page', schema: z.string(), contentType: 'text/html' }, ...errors },
    handler: async ({ params, ctx }) => {
      const html = await unsub.unsubscribePage(publicDeps, params.token, clientAddress(ctx));
      return reply(200, html, { ...PUBLIC_HEADERS, 'Content-Security-Policy': unsub.UNSUBSCRIBE_PAGE_CSP }, 'text/html; charset=utf-8');
    },
  });

  routes.add({
    method: 'post',
    path: '/outreach/unsubscribe/{token}',
    tag: TAG,
    summary: 'One-click unsubscribe (RFC 8058): lists the address (reason unsubscribe) and stops the enrollment; idempotent',
    auth: 'public',
    params: UnsubscribeParams,
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
      const answer = await unsub.unsubscribe(publicDeps, params.token, clientAddress(ctx));
      if (ctx.accepts('json', 'html') === 'html')
        return reply(
          200,
          unsub.unsubscribedPage(),
          { ...PUBLIC_HEADERS, 'Content-Security-Policy': unsub.UNSUBSCRIBE_PAGE_CSP },
          'text/html; charset=utf-8',
        );
      return reply(200, answer, PUBLIC_HEADERS);
    },
  });
}
