import type { Db } from './client';
import type { LeadRow } from './card-share-links';

// A card's lead inbox: what visitors sent through its share links, waiting for a person to accept it
// into the CRM or dismiss it.

export interface InboxLeadRow extends LeadRow {
  status: 'pending' | 'accepted' | 'dismissed';
  decided_at: Date | null;
  decided_by: string | null;
  share_link_source: string | null;
}

export async function listLeads(
  db: Db,
  orgId: string,
  cardId: string,
  q: { status?: string; limit: number; offset: number },
): Promise<InboxLeadRow[]> {
  return db<InboxLeadRow[]>`
    SELECT l.*, s.source AS share_link_source FROM card_leads l JOIN card_share_links s ON s.id = l.share_link_id
    WHERE l.org_id = ${orgId} AND l.card_id = ${cardId} ${q.status ? db`AND l.status = ${q.status}` : db``}
    ORDER BY l.created_at DESC, l.id DESC LIMIT ${q.limit} OFFSET ${q.offset}`;
}

export async function getLead(db: Db, orgId: string, cardId: string, leadId: string, lock = false): Promise<InboxLeadRow | undefined> {
  const [row]: [InboxLeadRow?] = await db`
    SELECT l.*, s.source AS share_link_source FROM card_leads l JOIN card_share_links s ON s.id = l.share_link_id
    WHERE l.org_id = ${orgId} AND l.card_id = ${cardId} AND l.id = ${leadId} ${lock ? db`FOR UPDATE OF l` : db``}`;
  return row;
}

export async function decideLead(
  db: Db,
  orgId: string,
  leadId: string,
  v: { status: 'accepted' | 'dismissed'; by: string; contact_id?: string; contact_created?: boolean },
): Promise<void> {
  await db`
    UPDATE card_leads SET status = ${v.status}, decided_at = now(), decided_by = ${v.by},
      contact_id = coalesce(${v.contact_id ?? null}::uuid, contact_id), contact_created = ${v.contact_created ?? false}
    WHERE org_id = ${orgId} AND id = ${leadId}`;
}

/** The name of the card's account, to tell whether a lead's company is that account. */
export async function accountName(db: Db, orgId: string, accountId: string): Promise<string | undefined> {
  const [row]: [{ name: string }?] = await db`SELECT name FROM accounts WHERE org_id = ${orgId} AND id = ${accountId}`;
  return row?.name;
}
