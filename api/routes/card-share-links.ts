import type Koa from 'koa';
import { z } from 'zod';
import { LEAD_PAGE_CSP, leadProblemsPage, leadThanksPage } from '../../domain/card-lead-pages';
import { UTM_FIELDS, type Utm } from '../../domain/cards';
import { isDomainError } from '../../domain/errors';
import { contentDisposition } from '../../platform/adapters/storage';
import * as share from '../../services/card-share-links';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { clientAddress } from '../middleware/client-address';
import { reply, type Routes } from '../route';
import { ErrorBody, ValidationErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import { HttpError, ValidationError, fromZodError } from '../errors';
import { readFormBody } from '../middleware/form-body';
import { errorPage } from '../middleware/html-errors';
import { readJsonBody } from '../middleware/json-body';
import {
  CreateShareLinkBody,
  CardParams,
  LEAD_BODY_LIMIT_BYTES,
  LeadBody,
  LeadReceived,
  LinkClickParams,
  PublicCard,
  QrQuery,
  ShareLink,
  ShareLinkList,
  ShareLinkParams,
  TokenParams,
  VisitQuery,
} from '../schemas/cards';

// Share links of a card: managed with a token of the card's organization, opened by anyone through the
// link or its QR code (/share/{token}...). The public routes are limited per client address and per
// link, and answer a revoked, expired or unknown link with the same 404.

const TAG = 'Card Share Links' as const;

// A request that prefers text/html (a browser navigating) gets these errors as a small HTML page instead
// of the JSON body (api/middleware/html-errors.ts): a person never sees raw JSON.
const hiddenLink = {
  404: {
    description: 'Unknown, revoked or expired link (indistinguishable); a small HTML page when the request prefers text/html',
    schema: ErrorBody,
  },
} as const;
const limited = {
  429: {
    description:
      'Too many requests from this address or for this link; retry after Retry-After seconds (an HTML page when the request prefers text/html)',
    schema: ErrorBody,
    headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' as const } } },
  },
} as const;
const publicErrors = {
  400: { description: 'A parameter value outside its choices', schema: ErrorBody },
  ...hiddenLink,
  ...limited,
  ...validationError,
} as const;

/** Headers of every public answer: nothing cached by the way (each load counts), no token in Referer. */
const PUBLIC_HEADERS = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff' };

function visitOf(ctx: Koa.Context, query: z.output<typeof VisitQuery>): share.Visit {
  const utm: Utm = {};
  for (const field of UTM_FIELDS) if (query[field] !== undefined) utm[field] = query[field];
  return {
    address: clientAddress(ctx),
    userAgent: ctx.get('User-Agent') || undefined,
    referrer: ctx.get('Referer') || undefined,
    utm,
    via: query.via,
  };
}

export function registerCardShareLinkRoutes(routes: Routes, deps: AppDeps): void {
  const publicDeps = { ...deps, limiters: share.createShareLimiters(deps.config) };

  // ---- management ----

  routes.add({
    method: 'post',
    path: '/cards/{card_id}/share-links',
    tag: TAG,
    summary: 'Create a share link of the card, with an optional source label and expiry',
    auth: { scope: 'crmManage' },
    params: CardParams,
    body: CreateShareLinkBody,
    responses: {
      200: { description: 'The new link, with its page, QR code and vCard URLs', schema: ShareLink },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) =>
      reply(200, await share.createShareLink(deps, orgOf(auth), actor(auth), params.card_id, body)),
  });

  routes.add({
    method: 'get',
    path: '/cards/{card_id}/share-links',
    tag: TAG,
    summary: "The card's share links, newest first, revoked and expired ones included",
    auth: { scope: 'crmRead' },
    params: CardParams,
    responses: { 200: { description: 'Links', schema: ShareLinkList }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => share.listShareLinks(deps, orgOf(auth), params.card_id),
  });

  routes.add({
    method: 'get',
    path: '/cards/{card_id}/share-links/{link_id}',
    tag: TAG,
    summary: 'One share link',
    auth: { scope: 'crmRead' },
    params: ShareLinkParams,
    responses: { 200: { description: 'The link', schema: ShareLink }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => share.getShareLink(deps, orgOf(auth), params.card_id, params.link_id),
  });

  routes.add({
    method: 'delete',
    path: '/cards/{card_id}/share-links/{link_id}',
    tag: TAG,
    summary: 'Revoke a share link at once (idempotent); its events stay for attribution',
    auth: { scope: 'crmManage' },
    params: ShareLinkParams,
    responses: { 204: { description: 'Revoked' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      await share.revokeShareLink(deps, orgOf(auth), params.card_id, params.link_id);
      return reply(204);
    },
  });

  // ---- public ----

  routes.add({
    method: 'get',
    path: '/share/{token}',
    tag: TAG,
    summary: 'The card as a small web page with a save-contact button and the lead form (counts a view; a QR scan with via=qr)',
    auth: 'public',
    params: TokenParams,
    query: VisitQuery,
    responses: { 200: { description: 'HTML page', schema: z.string(), contentType: 'text/html' }, ...publicErrors },
    handler: async ({ params, query, ctx }) => {
      const page = await share.sharePage(publicDeps, params.token, visitOf(ctx, query));
      return reply(200, page.html, { ...PUBLIC_HEADERS, 'Content-Security-Policy': page.csp }, 'text/html; charset=utf-8');
    },
  });

  routes.add({
    method: 'get',
    path: '/share/{token}/card',
    tag: TAG,
    summary: 'The card as JSON (counts a view; a QR scan with via=qr)',
    auth: 'public',
    params: TokenParams,
    query: VisitQuery,
    responses: { 200: { description: 'The public fields of the card', schema: PublicCard }, ...publicErrors },
    handler: async ({ params, query, ctx }) =>
      reply(200, await share.publicCard(publicDeps, params.token, visitOf(ctx, query)), PUBLIC_HEADERS),
  });

  routes.add({
    method: 'get',
    path: '/share/{token}/vcard',
    tag: TAG,
    summary: 'The card as a vCard 3.0 (.vcf) download (counts a vCard download)',
    auth: 'public',
    params: TokenParams,
    query: VisitQuery,
    responses: { 200: { description: 'text/vcard attachment', schema: z.string(), contentType: 'text/vcard' }, ...publicErrors },
    handler: async ({ params, query, ctx }) => {
      const card = await share.vcard(publicDeps, params.token, visitOf(ctx, query));
      return reply(
        200,
        card.body,
        { ...PUBLIC_HEADERS, 'Content-Disposition': contentDisposition(card.filename) },
        'text/vcard; charset=utf-8',
      );
    },
  });

  routes.add({
    method: 'get',
    path: '/share/{token}/qr.png',
    tag: TAG,
    summary: 'QR code (PNG) of the link; it opens the page with via=qr',
    auth: 'public',
    params: TokenParams,
    query: QrQuery,
    responses: {
      200: { description: 'PNG image', schema: z.string().openapi({ format: 'binary' }), contentType: 'image/png' },
      ...publicErrors,
    },
    handler: async ({ params, query, ctx }) => {
      const png = await share.qrCode(publicDeps, params.token, { address: clientAddress(ctx), utm: {} }, 'png', query.size);
      return reply(200, png, { ...PUBLIC_HEADERS, 'Cache-Control': 'private, max-age=300' }, 'image/png');
    },
  });

  routes.add({
    method: 'get',
    path: '/share/{token}/qr.svg',
    tag: TAG,
    summary: 'QR code (SVG) of the link; it opens the page with via=qr',
    auth: 'public',
    params: TokenParams,
    query: z.looseObject({}),
    responses: { 200: { description: 'SVG image', schema: z.string(), contentType: 'image/svg+xml' }, ...publicErrors },
    handler: async ({ params, ctx }) => {
      const svg = await share.qrCode(publicDeps, params.token, { address: clientAddress(ctx), utm: {} }, 'svg', 0);
      return reply(
        200,
        svg,
        {
          ...PUBLIC_HEADERS,
          'Cache-Control': 'private, max-age=300',
          'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
        },
        'image/svg+xml',
      );
    },
  });

  routes.add({
    method: 'get',
    path: '/share/{token}/links/{index}',
    tag: TAG,
    summary: "Follow one of the card's links (counts a link click): a redirect to its URL",
    auth: 'public',
    params: LinkClickParams,
    query: VisitQuery,
    responses: {
      302: { description: 'Redirect to the link', headers: { Location: { description: 'The link URL', schema: { type: 'string' } } } },
      ...publicErrors,
    },
    handler: async ({ params, query, ctx }) => {
      const url = await share.linkClick(publicDeps, params.token, params.index, visitOf(ctx, query));
      return reply(302, undefined, { ...PUBLIC_HEADERS, Location: url });
    },
  });

  routes.add({
    method: 'post',
    path: '/share/{token}/leads',
    tag: TAG,
    summary: "Leave your details for the card's owner: creates or fills a CRM contact (source card) and notifies the owner",
    description:
      "Takes JSON, or the share page's form posted as a plain HTML form (application/x-www-form-urlencoded, no script needed: " +
      'an empty optional field counts as not given, and the consent checkbox as true when ticked), with the same validation and limits. ' +
      'A form post from a browser (Accept: text/html) gets its answers as HTML pages: a thank-you page, or the refused fields.',
    auth: 'public',
    params: TokenParams,
    query: VisitQuery,
    documented: { body: LeadBody, bodyContentTypes: ['application/json', 'application/x-www-form-urlencoded'] },
    responses: LEAD_RESPONSES,
    handler: async ({ params, query, ctx }) => {
      const page = typeof ctx.is('application/x-www-form-urlencoded') === 'string' && ctx.accepts('json', 'html') === 'html';
      const back = `/share/${encodeURIComponent(params.token)}${ctx.querystring ? `?${ctx.querystring}` : ''}`;
      const done = await readLead(ctx, deps.config)
        .then((input) => share.submitLead(publicDeps, params.token, visitOf(ctx, query), input))
        .then(
          (received) => ({ received }),
          (error: unknown) => ({ error }),
        );
      if ('error' in done) return leadFailurePage(page, done.error, back);
      if (page) return reply(200, leadThanksPage(done.received.cardName, back), LEAD_PAGE_HEADERS, 'text/html; charset=utf-8');
      return reply(200, { status: done.received.status }, PUBLIC_HEADERS);
    },
  });
}

const LEAD_PAGE_HEADERS = { ...PUBLIC_HEADERS, 'Content-Security-Policy': LEAD_PAGE_CSP };
const LEAD_RESPONSES = {
  200: {
    description: 'Received (the same answer whether the email was known or not); a thank-you page for a form post that prefers text/html',
    schema: z.string(),
    contentType: 'text/html',
    json: LeadReceived,
  },
  400: {
    description: 'A parameter value outside its choices, or a body that is not valid UTF-8 (or nested deeper than JSON_MAX_DEPTH)',
    schema: ErrorBody,
  },
  404: {
    description: `${hiddenLink[404].description}; also for a form post that prefers text/html`,
    schema: z.string(),
    contentType: 'text/html',
    json: ErrorBody,
  },
  413: { description: `Body larger than ${LEAD_BODY_LIMIT_BYTES} bytes`, schema: ErrorBody },
  415: {
    description: 'A body other than JSON or a form (application/x-www-form-urlencoded), or in a charset other than UTF-8',
    schema: ErrorBody,
  },
  422: {
    description: 'Validation failed; for a form post that prefers text/html, a page naming the refused fields',
    schema: z.string(),
    contentType: 'text/html',
    json: ValidationErrorBody,
  },
  429: { ...limited[429], schema: z.string(), contentType: 'text/html', json: ErrorBody },
} as const;

/** The lead from a JSON body or a plain form post, validated by the same schema (422 as for any body). */
async function readLead(ctx: Koa.Context, config: AppDeps['config']): Promise<z.output<typeof LeadBody>> {
  const limitBytes = Math.min(LEAD_BODY_LIMIT_BYTES, config.BODY_LIMIT_BYTES);
  const sendsBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
  let input: unknown = {};
  if (sendsBody && ctx.is('application/x-www-form-urlencoded')) {
    // What a browser sends for the form: empty optional inputs, and the ticked checkbox as "on".
    const fields = await readFormBody(ctx, limitBytes);
    input = Object.fromEntries(
      Object.entries(fields)
        .filter(([key, value]) => value !== '' || key === 'name' || key === 'email')
        .map(([key, value]) => [key, key === 'consent' && FORM_TRUE.has(value.toLowerCase()) ? true : value]),
    );
  } else if (sendsBody) {
    if (!ctx.is('application/json', '+json'))
      throw new HttpError(415, `Unsupported media type ${ctx.request.type}: send application/json or application/x-www-form-urlencoded`);
    await readJsonBody(ctx, { limitBytes, maxDepth: config.JSON_MAX_DEPTH });
    input = (ctx.request as { body?: unknown }).body ?? {};
  }
  const parsed = LeadBody.safeParse(input);
  if (!parsed.success) throw fromZodError(parsed.error, 'body', input, LeadBody);
  return parsed.data;
}

const FORM_TRUE = new Set(['on', 'true', '1', 'yes']);

/** A failure of the lead post: an HTML page for a browser's form post, the JSON error otherwise. */
function leadFailurePage(page: boolean, error: unknown, back: string) {
  if (!page) throw error;
  const html = (status: 404 | 422 | 429, body: string, headers: Record<string, string> = {}) =>
    reply(status, body, { ...LEAD_PAGE_HEADERS, ...headers }, 'text/html; charset=utf-8');
  if (error instanceof ValidationError)
    return html(
      422,
      leadProblemsPage(
        error.issues.map((issue) => ({ field: String(issue.loc.slice(1).join('.') || 'form'), message: issue.msg })),
        back,
      ),
    );
  if (isDomainError(error, 'unprocessable'))
    return html(
      422,
      leadProblemsPage(
        (error.fields ?? []).map((f) => ({ field: String(f.loc.slice(1).join('.') || 'form'), message: f.msg })),
        back,
      ),
    );
  if (isDomainError(error, 'not_found')) return html(404, errorPage(404));
  if (isDomainError(error, 'rate_limited')) {
    const retryAfter = String(Math.ceil(error.retryAfterSeconds ?? 60));
    return html(429, errorPage(429, retryAfter), { 'Retry-After': retryAfter });
  }
  throw error;
}
