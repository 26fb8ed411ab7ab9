import { z } from 'zod';
import * as cards from '../../services/cards';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import { Card, CardList, CardListQuery, CardParams, CreateCardBody, SignatureQuery, UpdateCardBody } from '../schemas/cards';

// Cards: CRUD and the email signature. Share links, events and media live in card-share-links.ts,
// card-events.ts and public-media.ts.

const unknownRefs = { 404: { description: 'Owner, account or image not found in the organization', schema: ErrorBody } } as const;

export function registerCardRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/cards',
    tag: 'Card',
    summary: "The organization's cards, newest first",
    auth: { scope: 'crmRead' },
    query: CardListQuery,
    responses: {
      200: { description: 'One page of cards', schema: CardList },
      400: { description: 'Unknown filter', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => cards.listCards(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'post',
    path: '/cards',
    tag: 'Card',
    summary: 'Create a card; its owner defaults to the caller',
    auth: { scope: 'crmManage' },
    body: CreateCardBody,
    responses: { 200: { description: 'The new card', schema: Card }, ...authErrors, ...unknownRefs, ...validationError },
    handler: async ({ body, auth }) =>
      reply(200, await cards.createCard(deps, orgOf(auth), { userId: auth.userId, actor: actor(auth) }, body)),
  });

  routes.add({
    method: 'get',
    path: '/cards/{card_id}',
    tag: 'Card',
    summary: 'One card',
    auth: { scope: 'crmRead' },
    params: CardParams,
    responses: { 200: { description: 'The card', schema: Card }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => cards.getCard(deps, orgOf(auth), params.card_id),
  });

  routes.add({
    method: 'patch',
    path: '/cards/{card_id}',
    tag: 'Card',
    summary: 'Update a card: only the fields sent change; null clears',
    auth: { scope: 'crmManage' },
    params: CardParams,
    body: UpdateCardBody,
    responses: {
      200: { description: 'The updated card', schema: Card },
      400: { description: 'Empty body', schema: ErrorBody },
      ...authErrors,
      ...unknownRefs,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => cards.updateCard(deps, orgOf(auth), params.card_id, body),
  });

  routes.add({
    method: 'delete',
    path: '/cards/{card_id}',
    tag: 'Card',
    summary: 'Delete a card with its share links, leads records, events and images (captured contacts stay)',
    auth: { scope: 'crmManage' },
    params: CardParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      await cards.deleteCard(deps, orgOf(auth), params.card_id);
      return reply(204);
    },
  });

  routes.add({
    method: 'get',
    path: '/cards/{card_id}/signature',
    tag: 'Card',
    summary: 'Email-signature HTML of the card, rendered fresh from the current card on every request; nothing is stored',
    auth: { scope: 'crmRead' },
    params: CardParams,
    query: SignatureQuery,
    responses: {
      200: {
        description:
          'text/html (format html or fragment) or text/plain (format text); tables and inline styles only, absolute image URLs, every card value escaped',
        schema: z.string(),
        contentType: ['text/html', 'text/plain'],
      },
      400: { description: 'Unknown parameter or a value outside its choices', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, query, auth }) => {
      const { format, ...options } = query;
      const rendered = await cards.renderSignature(deps, orgOf(auth), params.card_id, format, options);
      return reply(200, rendered.body, { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' }, rendered.contentType);
    },
  });
}
