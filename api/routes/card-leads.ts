import * as leads from '../../services/card-leads';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import { CardLeadItem, CardLeadList, CardParams, LeadExportQuery, LeadListQuery, LeadParams } from '../schemas/cards';
import { z } from 'zod';

// A card's lead inbox: what visitors sent through its share links waits here until a person accepts it
// into the CRM (creating or filling a contact) or dismisses it.

const TAG = 'Card' as const;
const decided = { 409: { description: 'The lead was already accepted or dismissed', schema: ErrorBody } } as const;

export function registerCardLeadRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/cards/{card_id}/leads',
    tag: TAG,
    summary: "The card's lead inbox, newest first; filter by status (pending, accepted, dismissed)",
    auth: { scope: 'crmRead' },
    params: CardParams,
    query: LeadListQuery,
    responses: { 200: { description: 'Leads', schema: CardLeadList }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, query, auth }) => leads.listLeads(deps, orgOf(auth), params.card_id, query),
  });

  routes.add({
    method: 'get',
    path: '/cards/{card_id}/leads/export',
    tag: TAG,
    summary: "The card's leads as CSV, newest first (cells a spreadsheet would run as formulas start with ')",
    auth: { scope: 'crmRead' },
    params: CardParams,
    query: LeadExportQuery,
    responses: {
      200: { description: 'CSV with a header row', schema: z.string(), contentType: 'text/csv' },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, query, auth }) =>
      reply(
        200,
        await leads.exportLeads(deps, orgOf(auth), params.card_id, query),
        { 'Content-Disposition': 'attachment; filename="leads.csv"' },
        'text/csv; charset=utf-8',
      ),
  });

  routes.add({
    method: 'post',
    path: '/cards/{card_id}/leads/{lead_id}/accept',
    tag: TAG,
    summary:
      "Accept a lead into the CRM: a new contact, or the gaps of a known one filled (nothing overwritten); on the card's account unless the lead names another company",
    auth: { scope: 'crmManage' },
    params: LeadParams,
    responses: {
      200: { description: 'The accepted lead, with its contact', schema: CardLeadItem },
      ...authErrors,
      ...notFoundError,
      ...decided,
      ...validationError,
    },
    handler: async ({ params, auth }) => reply(200, await leads.acceptLead(deps, orgOf(auth), actor(auth), params.card_id, params.lead_id)),
  });

  routes.add({
    method: 'post',
    path: '/cards/{card_id}/leads/{lead_id}/dismiss',
    tag: TAG,
    summary: 'Dismiss a lead: it stays in the inbox as dismissed and never reaches the CRM',
    auth: { scope: 'crmManage' },
    params: LeadParams,
    responses: {
      200: { description: 'The dismissed lead', schema: CardLeadItem },
      ...authErrors,
      ...notFoundError,
      ...decided,
      ...validationError,
    },
    handler: async ({ params, auth }) =>
      reply(200, await leads.dismissLead(deps, orgOf(auth), actor(auth), params.card_id, params.lead_id)),
  });
}
