import type { Db } from './client';
import { keysetRows } from './kit/keyset';

// Feedback is global, not a tenant table: the organization is context, possibly null, so these
// functions take no organization to filter by; only operators read them.

export interface FeedbackRow {
  id: string;
  user_external_id: string;
  org_id: string | null;
  org_external_id: string | null;
  category: string;
  message: string;
  rating: number | null;
  context: Record<string, unknown>;
  submitter_email: string | null;
  status: string;
  status_changed_at: Date | null;
  status_changed_by: string | null;
  created_at: Date;
  cursor_t: string;
}

type Json = Parameters<Db['json']>[0];

export async function insertFeedback(
  db: Db,
  id: string,
  fields: {
    userId: string;
    orgId: string | null;
    category: string;
    message: string;
    rating: number | null;
    context: Record<string, unknown>;
    email: string | null;
  },
): Promise<{ id: string; created_at: Date }> {
  // Without an address in the body, the one the identity provider last gave for the user.
  const [row] = await db<{ id: string; created_at: Date }[]>`
    INSERT INTO feedback (id, user_id, org_id, category, message, rating, context, submitter_email)
    SELECT ${id}, ${fields.userId}, ${fields.orgId}, ${fields.category}, ${fields.message}, ${fields.rating},
      ${db.json(fields.context as Json)}, coalesce(${fields.email}::text, u.email)
    FROM users u WHERE u.id = ${fields.userId}
    RETURNING id, created_at`;
  return row!;
}

export async function listFeedback(
  db: Db,
  filters: { category?: string; org_id?: string; status?: string; user_id?: string },
  page: { limit: number; after?: { t: string; id: string } },
): Promise<FeedbackRow[]> {
  const category = filters.category ? db`AND f.category = ${filters.category}` : db``;
  const org = filters.org_id ? db`AND f.org_id = ${filters.org_id}` : db``;
  const status = filters.status ? db`AND f.status = ${filters.status}` : db``;
  const user = filters.user_id ? db`AND f.user_id = ${filters.user_id}` : db``;
  return keysetRows<FeedbackRow>(db, {
    select: db`f.id, u.external_id AS user_external_id, f.org_id, o.external_id AS org_external_id, f.category, f.message,
      f.rating, f.context, f.submitter_email, f.status, f.status_changed_at, f.status_changed_by, f.created_at`,
    from: db`feedback f JOIN users u ON u.id = f.user_id LEFT JOIN organizations o ON o.id = f.org_id`,
    where: db`true ${category} ${org} ${status} ${user}`,
    at: 'f.created_at',
    id: 'f.id',
    ...page,
  });
}

/** Sets a piece of feedback's triage status; undefined when there is no such feedback. */
export async function setFeedbackStatus(db: Db, id: string, status: string, by: string): Promise<FeedbackRow | undefined> {
  const [row]: [FeedbackRow?] = await db`
    WITH f AS (
      UPDATE feedback SET status = ${status}, status_changed_at = now(), status_changed_by = ${by}
      WHERE id = ${id} RETURNING *
    )
    SELECT f.id, u.external_id AS user_external_id, f.org_id, o.external_id AS org_external_id, f.category, f.message,
      f.rating, f.context, f.submitter_email, f.status, f.status_changed_at, f.status_changed_by, f.created_at, f.created_at::text AS cursor_t
    FROM f JOIN users u ON u.id = f.user_id LEFT JOIN organizations o ON o.id = f.org_id`;
  return row;
}
