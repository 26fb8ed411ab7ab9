import * as contacts from '../db/contacts';
import type { ContactRow, ContactValues } from '../db/contacts';
import type { ImportValues } from '../domain/contacts';
import type { Db } from '../db/client';
import { membersByExternalIds } from '../db/notifications';
import { FUNNEL_MOVES, funnelRefusal, type FunnelMove, type Stage } from '../domain/contacts';
import { conflict, invalid, notFound } from '../domain/errors';
import { uniqueTags } from '../domain/tags';
import type { ServiceDeps } from './deps';
import { emitEvent } from './notifications/emit';
import { iso } from './views';

export function contactView(row: ContactRow) {
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
    stage: row.stage,
    stage_changed_at: iso(row.stage_changed_at),
    tags: row.tags,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const accountNotFound = () => notFound('Account not found');
const contactNotFound = () => notFound('Contact not found');

type ContactInput = Omit<ContactValues, 'tags'> & { tags?: string[] | null };

/** `contact.assigned` for one written contact (see emitAssignments). */
async function emitAssigned(tx: Db, orgId: string, previousOwner: string | null, contact: OwnedContact, actorUserId: string | null) {
  await emitAssignments(tx, orgId, [{ ...contact, previous_owner_id: previousOwner }], actorUserId);
}

type OwnedContact = Pick<ContactRow, 'id' | 'first_name' | 'last_name' | 'email' | 'owner_id'>;

/**
 * `contact.assigned` into the outbox, in the caller's transaction, for each contact whose owner is now
 * set and differs from its previous one. The owner is an identity-provider user id (as a deal's); when
 * it names a member of the organization, that member is the recipient.
 */
async function emitAssignments(
  tx: Db,
  orgId: string,
  written: (OwnedContact & { previous_owner_id: string | null })[],
  actorUserId: string | null,
) {
  const assigned = written.filter((c) => c.owner_id !== null && c.owner_id !== c.previous_owner_id);
  if (assigned.length === 0) return;
  const members = await membersByExternalIds(tx, orgId, [...new Set(assigned.map((c) => c.owner_id!))]);
  const memberOf = new Map(members.map((m) => [m.external_id, m.user_id]));
  for (const contact of assigned) {
    const member = memberOf.get(contact.owner_id!);
    await emitEvent(tx, orgId, {
      event_type: 'contact.assigned',
      entity_type: 'contact',
      entity_id: contact.id,
      payload: {
        contact_id: contact.id,
        name: [contact.first_name, contact.last_name].filter(Boolean).join(' ') || contact.email,
        owner_id: contact.owner_id,
        previous_owner_id: contact.previous_owner_id,
      },
      actor_user_id: actorUserId,
      recipient_user_ids: member ? [member] : [],
    });
  }
}

export async function listContacts(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { search?: string; stage?: Stage; account_id?: string; tag?: string; owner_id?: string },
  page: { limit: number; offset: number },
) {
  const { rows, total } = await contacts.listContacts(
    deps.sql,
    orgId,
    { search: query.search, stage: query.stage, accountId: query.account_id, tag: query.tag, ownerId: query.owner_id },
    page,
  );
  return { contacts: rows.map(contactView), total };
}

export async function createContact(deps: Pick<ServiceDeps, 'sql'>, orgId: string, input: ContactInput, actorUserId: string | null = null) {
  const { tags, ...fields } = input;
  const row = await deps.sql.begin(async (tx) => {
    if (fields.account_id && !(await contacts.accountInOrg(tx, orgId, fields.account_id, true))) throw accountNotFound();
    const created = await contacts.insertContact(tx, orgId, { ...fields, tags: uniqueTags(tags ?? []) });
    await emitAssigned(tx, orgId, null, created, actorUserId);
    return created;
  });
  return contactView(row);
}

export interface ParsedImport {
  rows: { row: number; values: ImportValues }[];
  rejected: { row: number; reason: string }[];
}

/** Upserts the good rows by email; rows naming an account outside the organization join the rejected ones. */
export async function importContacts(
  deps: Pick<ServiceDeps, 'sql' | 'logger'>,
  orgId: string,
  parsed: ParsedImport,
  actorUserId: string | null = null,
) {
  const rejected = [...parsed.rejected];
  const counts = await deps.sql.begin(async (tx) => {
    const accountIds = [...new Set(parsed.rows.flatMap((r) => (r.values.account_id ? [r.values.account_id] : [])))];
    const known = await contacts.accountsInOrg(tx, orgId, accountIds);
    const good = parsed.rows.filter((r) => {
      if (!r.values.account_id || known.has(r.values.account_id)) return true;
      rejected.push({ row: r.row, reason: 'account_id: Account not found' });
      return false;
    });
    const { contacts: written, ...result } = await contacts.upsertContactsByEmail(
      tx,
      orgId,
      good.map((r) => r.values),
    );
    await emitAssignments(tx, orgId, written, actorUserId);
    return result;
  });
  rejected.sort((a, b) => a.row - b.row);
  deps.logger.info({ org_id: orgId, ...counts, rejected: rejected.length }, 'contacts imported');
  return { ...counts, rejected };
}

export async function getContact(deps: Pick<ServiceDeps, 'sql'>, orgId: string, contactId: string) {
  const row = await contacts.getContact(deps.sql, orgId, contactId);
  if (!row) throw contactNotFound();
  return contactView(row);
}

/** Changes the given fields; `{}` when the organization has no such contact. */
export async function updateContact(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  contactId: string,
  patch: Partial<ContactInput>,
  actorUserId: string | null = null,
) {
  if (Object.keys(patch).length === 0) throw invalid('Empty patch body: send at least one field');
  const { tags, ...fields } = patch;
  const values: ContactValues = { ...fields, ...(tags !== undefined ? { tags: uniqueTags(tags ?? []) } : {}) };
  // The account is checked before the contact is looked for: a foreign account_id is a 404 even when
  // the contact does not exist (only the contact itself ever answers {}).
  const row = await deps.sql.begin(async (tx) => {
    if (values.account_id && !(await contacts.accountInOrg(tx, orgId, values.account_id, true))) throw accountNotFound();
    const before = values.owner_id !== undefined ? await contacts.getContact(tx, orgId, contactId) : undefined;
    const updated = await contacts.updateContact(tx, orgId, contactId, values);
    // A new owner is announced with the change (outbox).
    if (before && updated) await emitAssigned(tx, orgId, before.owner_id, updated, actorUserId);
    return updated;
  });
  return row ? contactView(row) : {};
}

export async function deleteContact(deps: Pick<ServiceDeps, 'sql'>, orgId: string, contactId: string): Promise<void> {
  if (!(await contacts.deleteContact(deps.sql, orgId, contactId))) throw contactNotFound();
}

/** A funnel operation: the stage changes only from a stage the table allows (409 otherwise). */
export async function moveFunnel(deps: Pick<ServiceDeps, 'sql'>, orgId: string, contactId: string, operation: FunnelMove) {
  const move = FUNNEL_MOVES[operation];
  const result = await contacts.moveStage(deps.sql, orgId, contactId, move.to, move.from);
  if (!result) throw contactNotFound();
  if ('current' in result) throw conflict(funnelRefusal(operation, result.current));
  return contactView(result.row);
}
