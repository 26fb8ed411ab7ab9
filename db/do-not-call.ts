import type { Db } from './client';
import { onUnique } from './kit/unique';

// The organization's do-not-call list (migration 0064), and what a listing does to its campaign contacts.

export interface DoNotCallRow {
  org_id: string;
  number: string;
  reason: string | null;
  created_by: string;
  created_at: Date;
}

export async function insertNumber(db: Db, orgId: string, number: string, reason: string | null, actor: string): Promise<DoNotCallRow> {
  const [row] = await onUnique(
    db<DoNotCallRow[]>`
      INSERT INTO do_not_call_numbers (org_id, number, reason, created_by) VALUES (${orgId}, ${number}, ${reason}, ${actor})
      RETURNING *`,
    `Number already on the do-not-call list: ${number}`,
  );
  return row!;
}

export async function findNumber(db: Db, orgId: string, number: string): Promise<DoNotCallRow | undefined> {
  const [row]: [DoNotCallRow?] = await db`SELECT * FROM do_not_call_numbers WHERE org_id = ${orgId} AND number = ${number}`;
  return row;
}

export async function deleteNumber(db: Db, orgId: string, number: string): Promise<boolean> {
  const rows = await db`DELETE FROM do_not_call_numbers WHERE org_id = ${orgId} AND number = ${number} RETURNING number`;
  return rows.length > 0;
}

/** One page in number order after `afterNumber`, and the total. */
export async function listNumbers(
  db: Db,
  orgId: string,
  page: { limit: number; afterNumber?: string },
): Promise<{ rows: DoNotCallRow[]; total: number }> {
  const after = page.afterNumber !== undefined ? db`AND number > ${page.afterNumber}` : db``;
  const [rows, [count]] = await Promise.all([
    db<DoNotCallRow[]>`SELECT * FROM do_not_call_numbers WHERE org_id = ${orgId} ${after} ORDER BY number LIMIT ${page.limit + 1}`,
    db<{ total: number }[]>`SELECT count(*)::int AS total FROM do_not_call_numbers WHERE org_id = ${orgId}`,
  ]);
  return { rows, total: count!.total };
}

/** Pending contacts that carry the number stop: canceled, last outcome do_not_call. Returns their campaigns. */
export async function cancelPendingContactsOf(db: Db, orgId: string, number: string): Promise<{ canceled: number; campaigns: string[] }> {
  const rows = await db<{ campaign_id: string }[]>`
    UPDATE campaign_contacts SET status = 'canceled', next_attempt_at = NULL, last_outcome = 'do_not_call', updated_at = now()
    WHERE org_id = ${orgId} AND status = 'pending' AND phone_numbers @> ARRAY[${number}]::text[]
    RETURNING campaign_id`;
  return { canceled: rows.length, campaigns: [...new Set(rows.map((r) => r.campaign_id))] };
}

/**
 * Attempts claimed for a listed number fail before any dial: the conversation `failed` with reason
 * do_not_call, and the contact failed for good (no later attempt). Only attempts not yet handed to the dialer.
 */
export async function failAttempts(db: Db, orgId: string, attempts: { id: string; key: string }[]): Promise<string[]> {
  if (!attempts.length) return [];
  await db`
    UPDATE conversations SET status = 'failed', ended_at = now(), updated_at = now(),
      outcome = coalesce(outcome, '{}'::jsonb) || '{"reason": "do_not_call"}'::jsonb
    WHERE org_id = ${orgId} AND idempotency_key = ANY(${attempts.map((a) => a.key)}::text[]) AND status = 'queued'`;
  const rows = await db<{ campaign_id: string }[]>`
    UPDATE campaign_contacts SET status = 'failed', next_attempt_at = NULL, last_outcome = 'do_not_call', updated_at = now()
    WHERE org_id = ${orgId} AND id = ANY(${attempts.map((a) => a.id)}::uuid[]) AND status = 'calling' AND dialed_at IS NULL
    RETURNING campaign_id`;
  return [...new Set(rows.map((r) => r.campaign_id))];
}
