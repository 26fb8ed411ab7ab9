import * as deals from '../../services/deals';
import { actingUser, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { cappedLimit } from '../list-filters';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import { CreateDealBody, DEAL_LIST_MAX, Deal, DealListQuery, DealParams, UpdateDealBody } from '../schemas/deals';

// Deals: list and CRUD. The activity routes under /deals/{deal_id}/activities live in activities.ts.

export function registerDealRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/deals',
    tag: 'CRM',
    summary: 'List deals, newest first; bare array, no total',
    auth: { scope: 'crmRead' },
    query: DealListQuery,
    responses: {
      200: { description: 'Deals ordered by created_at descending (tie-break id descending)', schema: Deal.array() },
      400: { description: 'Unknown filter or invalid stage', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => deals.listDeals(deps, orgOf(auth), { ...query, limit: cappedLimit(query.limit, DEAL_LIST_MAX) }),
  });

  routes.add({
    method: 'post',
    path: '/deals',
    tag: 'CRM',
    summary: 'Create a deal',
    auth: { scope: 'crmManage' },
    body: CreateDealBody,
    responses: { 200: { description: 'The new deal', schema: Deal }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ body, auth }) => reply(200, await deals.createDeal(deps, orgOf(auth), body, actingUser(auth))),
  });

  routes.add({
    method: 'get',
    path: '/deals/{deal_id}',
    tag: 'CRM',
    summary: 'One deal',
    auth: { scope: 'crmRead' },
    params: DealParams,
    responses: { 200: { description: 'The deal', schema: Deal }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => deals.getDeal(deps, orgOf(auth), params.deal_id),
  });

  routes.add({
    method: 'patch',
    path: '/deals/{deal_id}',
    tag: 'CRM',
    summary: 'Update a deal: only the fields sent change; null clears; a move into a closed stage stamps closed_at',
    auth: { scope: 'crmManage' },
    params: DealParams,
    body: UpdateDealBody,
    responses: {
      200: { description: 'The updated deal', schema: Deal },
      400: { description: 'Empty body', schema: ErrorBody },
      ...authErrors,
      404: {
        description:
          'The deal is not in the organization ("Deal not found"), or a row the body refers to is not: an account_id ' +
          '("Account not found") or a contact_id ("Contact not found"), as the API contract answers for a referenced row',
        schema: ErrorBody,
      },
      ...validationError,
    },
    handler: async ({ params, body, auth }) => deals.updateDeal(deps, orgOf(auth), params.deal_id, body, actingUser(auth)),
  });

  routes.add({
    method: 'delete',
    path: '/deals/{deal_id}',
    tag: 'CRM',
    summary: "Delete a deal; its activities' deal_id becomes null",
    auth: { scope: 'crmManage' },
    params: DealParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      await deals.deleteDeal(deps, orgOf(auth), params.deal_id);
      return reply(204);
    },
  });
}
