import type { Db } from './client';
import type { ContactRow } from './contacts';

export interface ShareLinkRow {
  id: string;
  org_id: string;
  card_id: string;
  token: string;
  source: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  created_by: string;
  created_at: Date;
}

export async function insertShareLink(
  db: Db,
  orgId: string,
  cardId: string,
  values: { id: string; token: string; source: string | null; expires_at: Date | null; created_by: string },
): Promise<ShareLinkRow> {
  const [row] = await db<ShareLinkRow[]>`
    INSERT INTO card_share_links ${db({ ...values, org_id: orgId, card_id: cardId })} RETURNING *`;
  return row!;
}

/** The card's live signature link (newest first), if it has one. */
export async function findSignatureLink(db: Db, orgId: string, cardId: string, source: string): Promise<ShareLinkRow | undefined> {
  const [row]: [ShareLinkRow?] = await db`
    SELECT * FROM card_share_links
    WHERE org_id = ${orgId} AND card_id = ${cardId} AND source = ${source} AND revoked_at IS NULL
      AND (expires_at IS NULL OR expires_at > now())
    ORDER BY created_at DESC, id DESC LIMIT 1`;
  return row;
}

export async function listShareLinks(db: Db, orgId: string, cardId: string): Promise<ShareLinkRow[]> {
  return db<ShareLinkRow[]>`
    SELECT * FROM card_share_links WHERE org_id = ${orgId} AND card_id = ${cardId} ORDER BY created_at DESC, id DESC`;
}

export async function getShareLink(db: Db, orgId: string, cardId: string, id: string): Promise<ShareLinkRow | undefined> {
  const [row]: [ShareLinkRow?] = await db`
    SELECT * FROM card_share_links WHERE id = ${id} AND org_id = ${orgId} AND card_id = ${cardId}`;
  return row;
}

/** Revokes the link (a second revoke keeps the first time); undefined when the card has no such link. */
export async function revokeShareLink(db: Db, orgId: string, cardId: string, id: string): Promise<ShareLinkRow | undefined> {
  const [row]: [ShareLinkRow?] = await db`
    UPDATE card_share_links SET revoked_at = coalesce(revoked_at, now())
    WHERE id = ${id} AND org_id = ${orgId} AND card_id = ${cardId} RETURNING *`;
  return row;
}

/**
 * The link behind a token, whatever its organization (the visitor has nothing else), with the
 * database's clock for the expiry check. Callers decide what a revoked or expired link shows: nothing.
 */
export async function findLinkByToken(db: Db, token: string): Promise<(ShareLinkRow & { now: Date }) | undefined> {
  const [row]: [(ShareLinkRow & { now: Date })?] = await db`SELECT *, now() AS now FROM card_share_links WHERE token = ${token}`;
  return row;
}

export interface LeadContactValues {
  first_name: string;
  last_name: string | null;
  email: string;
  phone: string | null;
  company: string | null;
  notes: string | null;
  account_id: string | null;
  owner_id: string;
  source: string;
}

/**
 * The contact a lead lands on, by email (case-insensitive), in one statement so two submissions with
 * the same email cannot make two contacts. A new email creates a contact with everything given. A
 * known contact only gains values it lacks: nothing a visitor types ever overwrites what the CRM holds
 * (source, owner, stage and notes included), since anyone holding the link may submit any email.
 */
export async function upsertLeadContact(
  db: Db,
  orgId: string,
  id: string,
  v: LeadContactValues,
): Promise<{ contact: ContactRow; created: boolean }> {
  const [row] = await db<(ContactRow & { inserted: boolean })[]>`
    INSERT INTO contacts (id, org_id, first_name, last_name, email, phone, company, notes, account_id, owner_id, source)
    VALUES (${id}, ${orgId}, ${v.first_name}, ${v.last_name}, ${v.email}, ${v.phone}, ${v.company}, ${v.notes}, ${v.account_id}, ${v.owner_id}, ${v.source})
    ON CONFLICT (org_id, lower(email)) WHERE email IS NOT NULL DO UPDATE SET
      first_name = coalesce(contacts.first_name, EXCLUDED.first_name),
      last_name = coalesce(contacts.last_name, EXCLUDED.last_name),
      phone = coalesce(contacts.phone, EXCLUDED.phone),
      company = CASE WHEN contacts.account_id IS NULL THEN coalesce(contacts.company, EXCLUDED.company) ELSE contacts.company END,
      account_id = coalesce(contacts.account_id, EXCLUDED.account_id),
      owner_id = coalesce(contacts.owner_id, EXCLUDED.owner_id),
      updated_at = now()
    RETURNING *, (xmax = 0) AS inserted`;
  const { inserted, ...contact } = row!;
  return { contact: contact as ContactRow, created: inserted };
}

export interface LeadRow {
  id: string;
  org_id: string;
  card_id: string;
  share_link_id: string;
  contact_id: string | null;
  contact_created: boolean;
  name: string;
  email: string;
  phone: string | null;
  company: string | null;
  note: string | null;
  consent_at: Date;
  created_at: Date;
}

export async function insertLead(db: Db, orgId: string, row: Omit<LeadRow, 'org_id' | 'created_at' | 'consent_at'>): Promise<LeadRow> {
  const [created] = await db<LeadRow[]>`
    INSERT INTO card_leads ${db({ ...row, org_id: orgId })} RETURNING *`;
  return created!;
}
