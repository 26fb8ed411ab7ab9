import { cappedLimit } from '../list-filters';
import type { z } from 'zod';
import { lockAccountRef } from '../../db/accounts';
import type { Db } from '../../db/client';
import * as deals from '../../db/deals';
import type { DealFields, DealRow } from '../../db/deals';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { badRequest, notFound } from '../errors';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError, uniqueTags } from '../schemas/common';
import { CreateDealBody, DEAL_LIST_MAX, Deal, DealListQuery, DealParams, UpdateDealBody } from '../schemas/deals';

// Deals: list and CRUD. The activity routes under /deals/{deal_id}/activities live in activities.ts.

export function dealView(row: DealRow): z.output<typeof Deal> {
  return {
    id: row.id,
    name: row.name,
    stage: row.stage as z.output<typeof Deal>['stage'],
    value: row.value === null ? null : Number(row.value),
    currency: row.currency,
    owner_id: row.owner_id,
    account_id: row.account_id,
    contact_id: row.contact_id,
    close_date: row.close_date,
    tags: row.tags,
    closed_at: row.closed_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** A non-null account_id or contact_id must be in the organization (404 otherwise), held until commit. */
async function checkReferences(tx: Db, orgId: string, refs: { account_id?: string | null; contact_id?: string | null }) {
  if (refs.account_id && !(await lockAccountRef(tx, orgId, refs.account_id))) throw notFound('Account not found');
  if (refs.contact_id && !(await deals.lockContactRef(tx, orgId, refs.contact_id))) throw notFound('Contact not found');
}

const dealNotFound = () => notFound('Deal not found');

export function registerDealRoutes(routes: Routes, deps: AppDeps): void {
  const { sql } = deps;

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
    handler: async ({ query, auth }) => {
      const stage = query.stage;
      const rows = await deals.listDeals(sql, orgOf(auth), { ...query, stage, limit: cappedLimit(query.limit, DEAL_LIST_MAX) });
      return rows.map(dealView);
    },
  });

  routes.add({
    method: 'post',
    path: '/deals',
    tag: 'CRM',
    summary: 'Create a deal',
    auth: { scope: 'crmManage' },
    body: CreateDealBody,
    responses: { 200: { description: 'The new deal', schema: Deal }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ body, auth }) => {
      const orgId = orgOf(auth);
      const fields: DealFields = {
        name: body.name,
        stage: body.stage,
        value: body.value ?? null,
        currency: body.currency === undefined ? 'USD' : body.currency,
        owner_id: body.owner_id ?? null,
        account_id: body.account_id ?? null,
        contact_id: body.contact_id ?? null,
        close_date: body.close_date ?? null,
        tags: [...new Set(body.tags ?? [])],
      };
      const row = await sql.begin(async (tx) => {
        await checkReferences(tx, orgId, fields);
        return deals.insertDeal(tx, orgId, fields);
      });
      return reply(200, dealView(row));
    },
  });

  routes.add({
    method: 'get',
    path: '/deals/{deal_id}',
    tag: 'CRM',
    summary: 'One deal',
    auth: { scope: 'crmRead' },
    params: DealParams,
    responses: { 200: { description: 'The deal', schema: Deal }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      const row = await deals.getDeal(sql, orgOf(auth), params.deal_id);
      if (!row) throw dealNotFound();
      return dealView(row);
    },
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
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => {
      if (Object.keys(body).length === 0) throw badRequest('No fields to update');
      const orgId = orgOf(auth);
      const patch = body.tags ? { ...body, tags: uniqueTags(body.tags) } : body;
      const row = await sql.begin(async (tx) => {
        // The deal first: another organization's deal is 404 whatever the references say.
        if (!(await deals.lockDealRef(tx, orgId, params.deal_id))) throw dealNotFound();
        await checkReferences(tx, orgId, patch);
        return deals.updateDeal(tx, orgId, params.deal_id, patch);
      });
      if (!row) throw dealNotFound();
      return dealView(row);
    },
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
      if (!(await deals.deleteDeal(sql, orgOf(auth), params.deal_id))) throw dealNotFound();
      return reply(204);
    },
  });
}
