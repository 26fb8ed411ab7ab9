import * as events from '../../services/card-events';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import type { Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import { CardEventList, CardEventListQuery, CardEventSummary, CardParams, ShareLinkParams, SummaryQuery } from '../schemas/cards';

// Conversion attribution of cards: the raw events of a card and summaries per card and per share link.

const TAG = 'Card Events' as const;
const readErrors = {
  400: { description: 'Unknown filter or event_type', schema: ErrorBody },
  ...authErrors,
  ...notFoundError,
  ...validationError,
} as const;
const summaryResponses = { 200: { description: 'The summary', schema: CardEventSummary }, ...readErrors } as const;

export function registerCardEventRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/cards/{card_id}/events',
    tag: TAG,
    summary: "The card's events (view, qr_scan, vcard_download, link_click, lead_submitted), newest first",
    auth: { scope: 'crmRead' },
    params: CardParams,
    query: CardEventListQuery,
    responses: {
      200: { description: 'One page of events', schema: CardEventList },
      ...readErrors,
    },
    handler: async ({ params, query, auth }) => events.listCardEvents(deps, orgOf(auth), params.card_id, query),
  });

  routes.add({
    method: 'get',
    path: '/cards/{card_id}/events/summary',
    tag: TAG,
    summary: 'Counts per event type, view → lead conversion, by UTC day and by share link, over a range of days',
    auth: { scope: 'crmRead' },
    params: CardParams,
    query: SummaryQuery,
    responses: summaryResponses,
    handler: async ({ params, query, auth }) => events.summarizeCardEvents(deps, orgOf(auth), params.card_id, query),
  });

  routes.add({
    method: 'get',
    path: '/cards/{card_id}/share-links/{link_id}/events/summary',
    tag: TAG,
    summary: 'The same summary for one share link of the card',
    auth: { scope: 'crmRead' },
    params: ShareLinkParams,
    query: SummaryQuery,
    responses: summaryResponses,
    handler: async ({ params, query, auth }) =>
      events.summarizeCardEvents(deps, orgOf(auth), params.card_id, { ...query, share_link_id: params.link_id }),
  });
}
