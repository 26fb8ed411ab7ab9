import { stringify } from 'csv-stringify/sync';
import { lockAccountRef } from '../db/accounts';
import * as inbox from '../db/card-leads';
import type { InboxLeadRow } from '../db/card-leads';
import { upsertLeadContact } from '../db/card-share-links';
import * as cards from '../db/cards';
import type { Db } from '../db/client';
import { LEAD_SOURCE, csvSafe, sameCompany, splitName, type LeadStatus } from '../domain/cards';
import { conflict, notFound } from '../domain/errors';
import { newId } from '../platform/core/ids';
import { cardNotFound } from './cards';
import type { ServiceDeps } from './deps';

// A card's lead inbox. The public form only ever adds a pending lead; nothing reaches the CRM until a
// person accepts it. Accepting creates the contact, or fills only the gaps of a known one (a form
// anyone may submit never overwrites what the CRM holds), and files it under the card's account only
// when the lead names no other company.

const leadNotFound = () => notFound('Lead not found');

const leadView = (row: InboxLeadRow) => ({
  id: row.id,
  card_id: row.card_id,
  share_link_id: row.share_link_id,
  source: row.share_link_source,
  status: row.status,
  name: row.name,
  email: row.email,
  phone: row.phone,
  company: row.company,
  note: row.note,
  consent_at: row.consent_at.toISOString(),
  created_at: row.created_at.toISOString(),
  decided_at: row.decided_at?.toISOString() ?? null,
  decided_by: row.decided_by,
  contact_id: row.contact_id,
  contact_created: row.status === 'accepted' ? row.contact_created : null,
});

async function cardOf(deps: Pick<ServiceDeps, 'sql'>, orgId: string, cardId: string) {
  const card = await cards.getCard(deps.sql, orgId, cardId);
  if (!card) throw cardNotFound();
  return card;
}

export async function listLeads(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  cardId: string,
  q: { status?: LeadStatus; limit: number; offset: number },
) {
  await cardOf(deps, orgId, cardId);
  return { leads: (await inbox.listLeads(deps.sql, orgId, cardId, q)).map(leadView), limit: q.limit, offset: q.offset };
}

/** Every lead of the card (or of one status) as CSV, newest first, cells safe to open in a spreadsheet. */
export async function exportLeads(deps: Pick<ServiceDeps, 'sql'>, orgId: string, cardId: string, q: { status?: LeadStatus }) {
  await cardOf(deps, orgId, cardId);
  const columns = [
    'id',
    'created_at',
    'status',
    'name',
    'email',
    'phone',
    'company',
    'note',
    'source',
    'contact_id',
    'consent_at',
  ] as const;
  const rows = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await inbox.listLeads(deps.sql, orgId, cardId, { status: q.status, limit: 1000, offset });
    rows.push(...page.map(leadView));
    if (page.length < 1000) break;
  }
  return stringify(
    rows.map((r) => columns.map((c) => csvSafe(r[c] === null ? '' : String(r[c])))),
    { header: true, columns: [...columns] },
  );
}

/** Decides a pending lead under its row lock (a decided one is 409), then answers it as it now stands. */
async function decide(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  cardId: string,
  leadId: string,
  apply: (tx: Db, lead: InboxLeadRow) => Promise<void>,
) {
  await deps.sql.begin(async (tx) => {
    const lead = await inbox.getLead(tx, orgId, cardId, leadId, true);
    if (!lead) throw leadNotFound();
    if (lead.status !== 'pending') throw conflict(`Lead already ${lead.status}`);
    await apply(tx, lead);
  });
  return leadView((await inbox.getLead(deps.sql, orgId, cardId, leadId))!);
}

export async function acceptLead(deps: Pick<ServiceDeps, 'sql'>, orgId: string, actor: string, cardId: string, leadId: string) {
  const card = await cardOf(deps, orgId, cardId);
  return decide(deps, orgId, cardId, leadId, async (tx, lead) => {
    let accountId: string | null = null;
    if (card.account_id && (await lockAccountRef(tx, orgId, card.account_id))) {
      const name = await inbox.accountName(tx, orgId, card.account_id);
      if (!lead.company || (name !== undefined && sameCompany(lead.company, name))) accountId = card.account_id;
    }
    const { contact, created } = await upsertLeadContact(tx, orgId, newId(), {
      ...splitName(lead.name),
      email: lead.email,
      phone: lead.phone,
      company: lead.company,
      notes: lead.note,
      account_id: accountId,
      owner_id: card.owner_external_id,
      source: LEAD_SOURCE,
    });
    await inbox.decideLead(tx, orgId, leadId, { status: 'accepted', by: actor, contact_id: contact.id, contact_created: created });
  });
}

export async function dismissLead(deps: Pick<ServiceDeps, 'sql'>, orgId: string, actor: string, cardId: string, leadId: string) {
  await cardOf(deps, orgId, cardId);
  return decide(deps, orgId, cardId, leadId, (tx) => inbox.decideLead(tx, orgId, leadId, { status: 'dismissed', by: actor }));
}
