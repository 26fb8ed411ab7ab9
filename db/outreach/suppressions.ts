import type { Db } from '../client';
import { keysetRows } from '../kit/keyset';

// The organization's suppression list (see migration 0038): addresses compared case-insensitively.

export interface SuppressionRow {
  id: string;
  org_id: string;
  email: string;
  /** soft_bounce: repeated temporary failures (see domain/outreach/dsn.ts SOFT_BOUNCE_LIMIT). */
  reason: 'bounce' | 'soft_bounce' | 'unsubscribe' | 'complaint' | 'manual';
  note: string | null;
  created_by: string;
  created_at: Date;
  cursor_t: string;
}

/** Adds an address; an address already listed keeps its first entry. The entry either way. */
export async function suppress(
  db: Db,
  orgId: string,
  v: { id: string; email: string; reason: SuppressionRow['reason']; note: string | null; created_by: string },
): Promise<{ row: SuppressionRow; created: boolean }> {
  const [inserted]: [SuppressionRow?] = await db`
    INSERT INTO outreach_suppressions (id, org_id, email, reason, note, created_by)
    VALUES (${v.id}, ${orgId}, ${v.email.trim()}, ${v.reason}, ${v.note}, ${v.created_by})
    ON CONFLICT (org_id, lower(email)) DO NOTHING
    RETURNING *, created_at::text AS cursor_t`;
  if (inserted) return { row: inserted, created: true };
  const [existing] = await db<SuppressionRow[]>`
    SELECT *, created_at::text AS cursor_t FROM outreach_suppressions WHERE org_id = ${orgId} AND lower(email) = lower(${v.email.trim()})`;
  return { row: existing!, created: false };
}

const suppressionWhere = (db: Db, orgId: string, q: { search?: string; reason?: string }) => db`
  org_id = ${orgId}
  ${q.search ? db`AND strpos(lower(email), lower(${q.search})) > 0` : db``}
  ${q.reason ? db`AND reason = ${q.reason}` : db``}`;

export async function listSuppressions(
  db: Db,
  orgId: string,
  q: { search?: string; reason?: string; limit: number; after?: { t: string; id: string } },
): Promise<SuppressionRow[]> {
  return keysetRows<SuppressionRow>(db, {
    select: db`*`,
    from: db`outreach_suppressions`,
    where: suppressionWhere(db, orgId, q),
    limit: q.limit,
    after: q.after,
  });
}

export async function countSuppressions(db: Db, orgId: string, q: { search?: string; reason?: string }): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM outreach_suppressions WHERE ${suppressionWhere(db, orgId, q)}`;
  return row!.n;
}

export async function deleteSuppression(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM outreach_suppressions WHERE org_id = ${orgId} AND id = ${id}`;
  return rows.count > 0;
}

/** Which of these addresses are suppressed (lower-cased). */
export async function suppressedAmong(db: Db, orgId: string, emails: string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  const rows = await db<{ email: string }[]>`
    SELECT lower(email) AS email FROM outreach_suppressions
    WHERE org_id = ${orgId} AND lower(email) = ANY(${emails.map((e) => e.trim().toLowerCase())}::text[])`;
  return new Set(rows.map((r) => r.email));
}
