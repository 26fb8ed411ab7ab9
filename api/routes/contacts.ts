import { z } from 'zod';
import * as contacts from '../../services/contacts';
import { actingUser, orgOf } from '../auth/context';
import { parseContactsCsv } from '../contacts-csv';
import type { AppDeps } from '../deps';
import { cappedLimit } from '../list-filters';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import {
  CONTACT_LIST_MAX,
  Contact,
  ContactListQuery,
  ContactParams,
  CreateContactBody,
  FUNNEL_MOVES,
  ImportBody,
  ImportReport,
  PatchContactBody,
  type FunnelMove,
} from '../schemas/contacts';

const conflictError = { 409: { description: 'Another contact of the organization has this email', schema: ErrorBody } } as const;

const FUNNEL_SUMMARIES: Record<FunnelMove, string> = {
  respond: 'Record that the contact responded (stage responded)',
  disqualify: 'Disqualify the contact (stage disqualified)',
  convert: 'Convert the contact (stage converted)',
};

export function registerContactRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/contacts',
    tag: 'CRM',
    summary: 'List contacts, newest first; the total match count is in X-Total-Count',
    auth: { scope: 'crmRead' },
    query: ContactListQuery,
    responses: {
      200: {
        description: 'A page of contacts',
        schema: z.array(Contact),
        headers: { 'X-Total-Count': { description: 'Contacts matching the filters, over all pages', schema: { type: 'integer' } } },
      },
      400: { description: 'Unknown filter or invalid stage', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => {
      const page = await contacts.listContacts(deps, orgOf(auth), query, {
        limit: cappedLimit(query.limit, CONTACT_LIST_MAX),
        offset: query.offset,
      });
      return reply(200, page.contacts, { 'X-Total-Count': String(page.total) });
    },
  });

  routes.add({
    method: 'post',
    path: '/contacts',
    tag: 'CRM',
    summary: 'Create a contact at stage new (department is set by PATCH or CSV import only)',
    auth: { scope: 'crmManage' },
    body: CreateContactBody,
    responses: { 200: { description: 'Created', schema: Contact }, ...authErrors, ...notFoundError, ...conflictError, ...validationError },
    handler: async ({ body, auth }) => reply(200, await contacts.createContact(deps, orgOf(auth), body, actingUser(auth))),
  });

  routes.add({
    method: 'post',
    path: '/contacts/import',
    tag: 'CRM',
    summary: 'Import contacts from CSV, upserting by email; bad rows are reported and skipped',
    auth: { scope: 'crmManage' },
    body: ImportBody,
    responses: {
      200: { description: 'What was created, updated and rejected', schema: ImportReport },
      400: { description: 'Malformed CSV or header', schema: ErrorBody },
      413: { description: 'More rows than one import takes', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) => contacts.importContacts(deps, orgOf(auth), parseContactsCsv(body.csv), actingUser(auth)),
  });

  routes.add({
    method: 'get',
    path: '/contacts/{contact_id}',
    tag: 'CRM',
    summary: 'Read one contact',
    auth: { scope: 'crmRead' },
    params: ContactParams,
    responses: { 200: { description: 'The contact', schema: Contact }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => contacts.getContact(deps, orgOf(auth), params.contact_id),
  });

  routes.add({
    method: 'patch',
    path: '/contacts/{contact_id}',
    tag: 'CRM',
    summary: 'Change the given fields of a contact; {} when no contact matched',
    auth: { scope: 'crmManage' },
    params: ContactParams,
    body: PatchContactBody,
    responses: {
      200: {
        description: 'The updated contact, or {} when the organization has no such contact',
        schema: z.union([Contact, z.object({})]),
      },
      400: { description: 'Empty body', schema: ErrorBody },
      404: { description: 'account_id is not an account of the organization', schema: ErrorBody },
      ...conflictError,
      ...authErrors,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => contacts.updateContact(deps, orgOf(auth), params.contact_id, body, actingUser(auth)),
  });

  routes.add({
    method: 'delete',
    path: '/contacts/{contact_id}',
    tag: 'CRM',
    summary: 'Delete a contact (its deals and activities keep existing, unlinked)',
    auth: { scope: 'crmManage' },
    params: ContactParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      await contacts.deleteContact(deps, orgOf(auth), params.contact_id);
      return reply(204);
    },
  });

  for (const [operation, move] of Object.entries(FUNNEL_MOVES) as [FunnelMove, (typeof FUNNEL_MOVES)[FunnelMove]][]) {
    routes.add({
      method: 'post',
      path: `/contacts/{contact_id}/${operation}`,
      tag: 'CRM',
      summary: FUNNEL_SUMMARIES[operation],
      auth: { scope: 'crmManage' },
      params: ContactParams,
      responses: {
        200: { description: 'The contact at its new stage', schema: Contact },
        409: { description: `Not allowed from the current stage; allowed from ${move.from.join(', ')}`, schema: ErrorBody },
        ...authErrors,
        ...notFoundError,
        ...validationError,
      },
      handler: async ({ params, auth }) => contacts.moveFunnel(deps, orgOf(auth), params.contact_id, operation),
    });
  }
}
