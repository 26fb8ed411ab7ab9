import { z } from 'zod';
import * as contacts from '../../db/contacts';
import type { ContactRow, ContactValues } from '../../db/contacts';
import { orgOf } from '../auth/context';
import { parseContactsCsv } from '../contacts-csv';
import type { AppDeps } from '../deps';
import { badRequest, conflict, notFound, ValidationError } from '../errors';
import { cappedLimit } from '../list-filters';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError, uniqueTags } from '../schemas/common';
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

export function contactView(row: ContactRow): z.output<typeof Contact> {
  return {
    id: row.id,
    account_id: row.account_id,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    title: row.title,
    department: row.department,
    phone: row.phone,
    linkedin_url: row.linkedin_url,
    company: row.company,
    company_domain: row.company_domain,
    source: row.source,
    notes: row.notes,
    owner_id: row.owner_id,
    stage: row.stage as z.output<typeof Contact>['stage'],
    stage_changed_at: row.stage_changed_at?.toISOString() ?? null,
    tags: row.tags,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}


/** The db layer's write errors as HTTP answers. */
async function writing<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof contacts.DuplicateEmailError) throw conflict(error.message);
    if (error instanceof contacts.MissingAccountError) throw notFound(error.message);
    if ((error as { constraint_name?: string }).constraint_name === 'contacts_named') {
      throw new ValidationError([
        { type: 'value_error', loc: ['body'], msg: 'A contact needs at least one of first_name, last_name or email', input: null, ctx: {} },
      ]);
    }
    throw error;
  }
}

const accountNotFound = () => notFound('Account not found');
const contactNotFound = () => notFound('Contact not found');
const conflictError = { 409: { description: 'Another contact of the organization has this email', schema: ErrorBody } } as const;

const FUNNEL_SUMMARIES: Record<FunnelMove, string> = {
  respond: 'Record that the contact responded (stage responded)',
  disqualify: 'Disqualify the contact (stage disqualified)',
  convert: 'Convert the contact (stage converted)',
};

export function registerContactRoutes(routes: Routes, deps: AppDeps): void {
  const { sql } = deps;

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
      const stage = query.stage;
      const { rows, total } = await contacts.listContacts(
        sql,
        orgOf(auth),
        { search: query.search, stage, accountId: query.account_id, tag: query.tag, ownerId: query.owner_id },
        { limit: cappedLimit(query.limit, CONTACT_LIST_MAX), offset: query.offset },
      );
      return reply(200, rows.map(contactView), { 'X-Total-Count': String(total) });
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
    handler: async ({ body, auth }) => {
      const orgId = orgOf(auth);
      const { tags, ...fields } = body;
      const row = await writing(() =>
        sql.begin(async (tx) => {
          if (fields.account_id && !(await contacts.accountInOrg(tx, orgId, fields.account_id, true))) throw accountNotFound();
          return contacts.insertContact(tx, orgId, { ...fields, tags: uniqueTags(tags ?? []) });
        }),
      );
      return reply(200, contactView(row));
    },
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
    handler: async ({ body, auth }) => {
      const orgId = orgOf(auth);
      const { rows, rejected } = parseContactsCsv(body.csv);
      const counts = await sql.begin(async (tx) => {
        const accountIds = [...new Set(rows.flatMap((r) => (r.values.account_id ? [r.values.account_id] : [])))];
        const known = await contacts.accountsInOrg(tx, orgId, accountIds);
        const good = rows.filter((r) => {
          if (!r.values.account_id || known.has(r.values.account_id)) return true;
          rejected.push({ row: r.row, reason: 'account_id: Account not found' });
          return false;
        });
        return contacts.upsertContactsByEmail(tx, orgId, good.map((r) => r.values));
      });
      rejected.sort((a, b) => a.row - b.row);
      deps.logger.info({ org_id: orgId, ...counts, rejected: rejected.length }, 'contacts imported');
      return { ...counts, rejected };
    },
  });

  routes.add({
    method: 'get',
    path: '/contacts/{contact_id}',
    tag: 'CRM',
    summary: 'Read one contact',
    auth: { scope: 'crmRead' },
    params: ContactParams,
    responses: { 200: { description: 'The contact', schema: Contact }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      const row = await contacts.getContact(sql, orgOf(auth), params.contact_id);
      if (!row) throw contactNotFound();
      return contactView(row);
    },
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
      200: { description: 'The updated contact, or {} when the organization has no such contact', schema: z.union([Contact, z.object({})]) },
      400: { description: 'Empty body', schema: ErrorBody },
      404: { description: 'account_id is not an account of the organization', schema: ErrorBody },
      ...conflictError,
      ...authErrors,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => {
      if (Object.keys(body).length === 0) throw badRequest('Empty patch body: send at least one field');
      const orgId = orgOf(auth);
      const { tags, ...fields } = body;
      const values: ContactValues = { ...fields, ...(tags !== undefined ? { tags: uniqueTags(tags ?? []) } : {}) };
      // The account is checked before the contact is looked for: a foreign account_id is a 404 even
      // when the contact does not exist (rule 5 only ever answers {} for the contact itself).
      const row = await writing(() =>
        sql.begin(async (tx) => {
          if (values.account_id && !(await contacts.accountInOrg(tx, orgId, values.account_id, true))) throw accountNotFound();
          return contacts.updateContact(tx, orgId, params.contact_id, values);
        }),
      );
      return row ? contactView(row) : {};
    },
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
      if (!(await contacts.deleteContact(sql, orgOf(auth), params.contact_id))) throw contactNotFound();
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
      handler: async ({ params, auth }) => {
        const result = await contacts.moveStage(sql, orgOf(auth), params.contact_id, move.to, move.from);
        if (!result) throw contactNotFound();
        if ('current' in result) {
          throw conflict(`Cannot ${operation} a contact in stage ${result.current}; allowed from ${move.from.join(', ')}`);
        }
        return contactView(result.row);
      },
    });
  }
}
