import type Koa from 'koa';
import { z } from 'zod';
import { leadProblemsPage, leadThanksPage } from '../../domain/card-lead-pages';
import { isDomainError } from '../../domain/errors';
import { contentDisposition } from '../../platform/adapters/storage';
import * as share from '../../services/card-share-links';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { clientAddress } from '../middleware/client-address';
import { reply, type Routes } from '../route';
import { authErrors, notFoundError, validationError } from '../schemas/common';
import { HttpError, ValidationError, fromZodError } from '../errors';
import { readFormBody } from '../middleware/form-body';
import { errorPage } from '../middleware/html-errors';
import { readJsonBody } from '../middleware/json-body';
import {
  CreateShareLinkBody,
  CardParams,
  LEAD_BODY_LIMIT_BYTES,
  LeadBody,
  LinkClickParams,
  PublicCard,
  QrQuery,
  ShareLink,
  ShareLinkList,
  ShareLinkParams,
  TokenParams,
  VisitQuery,
} from '../schemas/cards';
import { LEAD_PAGE_HEADERS, LEAD_RESPONSES, PUBLIC_HEADERS, publicErrors } from '../schemas/card-share-links';

// Share links of a card: managed with a token of the card's organization, opened by anyone through the
// link or its QR code (/share/{token}...). The public routes are limited per client address and per
// link, and answer a revoked, expired or unknown link with the same 404.

const TAG = 'Card Share Links' as const;

/** Where a public request came from: its address (for limits only), User-Agent and Referer, and the query's attribution. */
const visitOf = (ctx: Koa.Context, query: z.output<typeof VisitQuery>): share.Visit =>
  share.visitFrom(
    { address: clientAddress(ctx), userAgent: ctx.get('User-Agent') || undefined, referrer: ctx.get('Referer') || undefined },
    query,
  );

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

/** The lead from a JSON body or a plain form post, validated by the same schema (422 as for any body). */
async function readLead(ctx: Koa.Context, config: AppDeps['config']): Promise<z.output<typeof LeadBody>> {
  const limitBytes = Math.min(LEAD_BODY_LIMIT_BYTES, config.BODY_LIMIT_BYTES);
  const sendsBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
  let input: unknown = {};
  if (sendsBody && ctx.is('application/x-www-form-urlencoded')) {
    // What a browser sends for the form: empty optional inputs, and the ticked checkbox as "on".
    input = share.leadFromForm(await readFormBody(ctx, limitBytes));
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

/** A failure of the lead post: an HTML page for a browser's form post, the JSON error otherwise. */
function leadFailurePage(page: boolean, error: unknown, back: string) {
  if (!page) throw error;
  const html = (status: 404 | 422 | 429, body: string, headers: Record<string, string> = {}) =>
    reply(status, body, { ...LEAD_PAGE_HEADERS, ...headers }, 'text/html; charset=utf-8');
  const refused = error instanceof ValidationError ? error.issues : isDomainError(error, 'unprocessable') ? (error.fields ?? []) : null;
  if (refused) return html(422, leadProblemsPage(share.leadProblems(refused), back));
  if (isDomainError(error, 'not_found')) return html(404, errorPage(404));
  if (isDomainError(error, 'rate_limited')) {
    const retryAfter = String(Math.ceil(error.retryAfterSeconds ?? 60));
    return html(429, errorPage(429, retryAfter), { 'Retry-After': retryAfter });
  }
  throw error;
}
