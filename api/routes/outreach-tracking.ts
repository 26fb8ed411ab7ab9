import type Koa from 'koa';
import { z } from 'zod';
import { isDomainError } from '../../domain/errors';
import * as tracking from '../../services/outreach/tracking';
import type { AppDeps } from '../deps';
import { errorPage } from '../middleware/html-errors';
import { clientAddress } from '../middleware/client-address';
import { reply, type Routes } from '../route';
import { ErrorBody } from '../schemas/common';
import { IGNORED_QUERY_NOTE, IgnoredQuery, QUERY_NOT_UTF8, TrackingTokenParams } from '../schemas/outreach-tracking';

// Open and click tracking of sent steps (services/outreach/tracking.ts), reached on a sending domain's
// tracking host without a token: the path's signed token is the capability. Rate limits only stop
// recording: the recipient always gets the image and reaches the link.

const TAG = 'Outreach' as const;
const NO_CACHE = {
  'Cache-Control': 'no-store, no-cache, must-revalidate, private',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};
const unknownToken = {
  404: {
    description:
      'A token that does not verify (tampered, made up) or whose message is gone; a small HTML page when the request prefers text/html',
    schema: z.string(),
    contentType: 'text/html',
    json: ErrorBody,
  },
} as const;

const CLICK_RESPONSES = {
  302: {
    description: 'Redirect to the link as the step wrote it',
    headers: { Location: { description: 'The recorded URL', schema: { type: 'string' as const } } },
  },
  ...QUERY_NOT_UTF8,
  ...unknownToken,
} as const;

const requestOf = (ctx: Koa.Context): tracking.Request => ({
  method: ctx.method,
  userAgent: ctx.get('User-Agent') || undefined,
  address: clientAddress(ctx),
});

/** The unknown-link 404 as a page for a browser, JSON for an API client. */
function notFoundReply(ctx: Koa.Context, error: unknown) {
  if (!isDomainError(error, 'not_found') || ctx.accepts('json', 'html') !== 'html') throw error;
  return reply(
    404,
    errorPage(404).replace(
      /The card you are looking for[^<]*/,
      'This link is not valid. Check that the whole link from the email was opened.',
    ),
    {
      ...NO_CACHE,
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
    },
    'text/html; charset=utf-8',
  );
}

export function registerOutreachTrackingRoutes(routes: Routes, deps: AppDeps): void {
  const publicDeps = { sql: deps.sql, config: deps.config, logger: deps.logger, limiter: tracking.createTrackingLimiter(deps.config) };

  routes.add({
    method: 'get',
    path: '/t/o/{token}.gif',
    tag: TAG,
    summary: 'Open pixel of a tracked step: records an open (a person’s, or a machine’s apart) and answers a 1×1 GIF',
    description: IGNORED_QUERY_NOTE,
    auth: 'public',
    params: TrackingTokenParams,
    query: IgnoredQuery,
    responses: {
      200: { description: 'A transparent 1×1 GIF', schema: z.string().openapi({ format: 'binary' }), contentType: 'image/gif' },
      ...QUERY_NOT_UTF8,
      ...unknownToken,
    },
    handler: async ({ params, ctx }) => {
      try {
        await tracking.recordOpen(publicDeps, params.token, requestOf(ctx));
      } catch (error) {
        return notFoundReply(ctx, error);
      }
      return reply(200, tracking.PIXEL_GIF, NO_CACHE, 'image/gif');
    },
  });

  routes.add({
    method: 'get',
    path: '/t/c/{token}',
    tag: TAG,
    summary:
      'Link of a tracked step: records a click and redirects to the URL recorded for that message and link (never one from the request)',
    description: IGNORED_QUERY_NOTE,
    auth: 'public',
    params: TrackingTokenParams,
    query: IgnoredQuery,
    responses: CLICK_RESPONSES,
    handler: async ({ params, ctx }) => {
      const found = await tracking.followClick(publicDeps, params.token, requestOf(ctx)).then(
        (url) => ({ url }),
        (error: unknown) => ({ error }),
      );
      if ('error' in found) return notFoundReply(ctx, found.error);
      return reply(302, undefined, { ...NO_CACHE, Location: found.url });
    },
  });
}
