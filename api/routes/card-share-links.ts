import type Koa from 'koa';
import { z } from 'zod';
import { UTM_FIELDS, type Utm } from '../../domain/cards';
import { contentDisposition } from '../../platform/storage';
import * as share from '../../services/card-share-links';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { clientAddress } from '../middleware/client-address';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
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
    auth: 'public',
    params: TokenParams,
    query: VisitQuery,
    body: LeadBody,
    bodyLimitBytes: LEAD_BODY_LIMIT_BYTES,
    responses: {
      200: { description: 'Received (the same answer whether the email was known or not)', schema: LeadReceived },
      ...publicErrors,
    },
    handler: async ({ params, query, body, ctx }) =>
      reply(200, await share.submitLead(publicDeps, params.token, visitOf(ctx, query), body), PUBLIC_HEADERS),
  });
}
