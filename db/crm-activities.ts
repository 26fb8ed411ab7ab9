import { newId } from '../platform/core/ids';
import type { Db } from './client';

/** What an activity keeps in metadata rather than in a column. */
export interface ActivityMetadata {
  attendees?: { name: string; email: string }[] | null;
  transcript?: string | null;
  recording_url?: string | null;
  location?: string | null;
  provider?: string | null;
}

export interface ActivityRow {
  id: string;
  org_id: string;
  account_id: string | null;
  deal_id: string | null;
  contact_id: string | null;
  type: string;
  subject: string | null;
  body: string | null;
  due_at: Date | null;
  duration_minutes: number | null;
  metadata: ActivityMetadata;
  created_by: string | null;
  created_at: Date;
  effective_time: Date;
}

/** The stored fields of a new activity; `direction` has no place here, it is never stored. */
export interface NewActivity {
  type: string;
  subject: string | null;
  body: string | null;
  contact_id: string | null;
  due_at: string | null;
  duration_minutes: number | null;
  metadata: ActivityMetadata;
  created_by: string;
}

/** Inserts an activity on the account; undefined when the account is not in the organization. */
export async function insertAccountActivity(db: Db, orgId: string, accountId: string, a: NewActivity): Promise<string | undefined> {
  const [row]: [{ id: string }?] = await db`
    INSERT INTO activities (id, org_id, account_id, deal_id, contact_id, type, subject, body, due_at, duration_minutes, metadata, created_by)
    SELECT ${newId()}, ${orgId}, acc.id, NULL, ${a.contact_id}, ${a.type}, ${a.subject}, ${a.body}, ${a.due_at},
           ${a.duration_minutes}, ${db.json(a.metadata as never)}, ${a.created_by}
    FROM accounts acc WHERE acc.id = ${accountId} AND acc.org_id = ${orgId}
    RETURNING id`;
  return row?.id;
}

/** Inserts an activity on the deal and on the deal's account (if any); undefined when the deal is not in the organization. */
export async function insertDealActivity(db: Db, orgId: string, dealId: string, a: NewActivity): Promise<string | undefined> {
  const [row]: [{ id: string }?] = await db`
    INSERT INTO activities (id, org_id, account_id, deal_id, contact_id, type, subject, body, due_at, duration_minutes, metadata, created_by)
    SELECT ${newId()}, ${orgId}, d.account_id, d.id, ${a.contact_id}, ${a.type}, ${a.subject}, ${a.body}, ${a.due_at},
           ${a.duration_minutes}, ${db.json(a.metadata as never)}, ${a.created_by}
    FROM deals d WHERE d.id = ${dealId} AND d.org_id = ${orgId}
    RETURNING id`;
  return row?.id;
}

/**
 * Inserts an activity on the contact (and on the contact's account at write time), with its direction
 * (inbound or outbound mail); undefined when the contact is not in the organization.
 */
export async function insertContactActivity(
  db: Db,
  orgId: string,
  contactId: string,
  a: NewActivity,
  direction: string | null,
): Promise<string | undefined> {
  const [row]: [{ id: string }?] = await db`
    INSERT INTO activities (id, org_id, account_id, deal_id, contact_id, type, subject, body, direction, due_at, duration_minutes, metadata, created_by)
    SELECT ${newId()}, ${orgId}, c.account_id, NULL, c.id, ${a.type}, ${a.subject}, ${a.body}, ${direction}, ${a.due_at},
           ${a.duration_minutes}, ${db.json(a.metadata as never)}, ${a.created_by}
    FROM contacts c WHERE c.id = ${contactId} AND c.org_id = ${orgId}
    RETURNING id`;
  return row?.id;
}

/** A feed by effective_time descending (tie-break id descending); future rows dropped on request. */
export function activityFeed(
  db: Db,
  orgId: string,
  on: { account_id: string } | { deal_id: string },
  page: { excludeFuture: boolean; limit: number; offset: number },
) {
  const owner = 'account_id' in on ? db`account_id = ${on.account_id}` : db`deal_id = ${on.deal_id}`;
  return db<ActivityRow[]>`
    SELECT * FROM activities
    WHERE org_id = ${orgId} AND ${owner}
    ${page.excludeFuture ? db`AND effective_time <= now()` : db``}
    ORDER BY effective_time DESC, id DESC
    LIMIT ${page.limit} OFFSET ${page.offset}`;
}

/** Clears account_id and deal_id together; false when the activity is not in the organization. */
export async function unlinkActivity(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`UPDATE activities SET account_id = NULL, deal_id = NULL WHERE id = ${id} AND org_id = ${orgId} RETURNING id`;
  return rows.length > 0;
}
