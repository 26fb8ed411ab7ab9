import type { Db } from './client';

// The next instant a call may start, per organization and scope (migration 0064): a dial reserves its
// instant and moves the scopes on in one statement, under the rows' locks, so every worker and every
// retried activity shares one spacing. Times are the database's clock, never the worker's.

/** Makes the scopes' rows (first use); their next allowed instant starts in the past. */
export async function ensureScopes(db: Db, orgId: string, scopes: string[]): Promise<void> {
  await db`
    INSERT INTO dial_pacing (org_id, scope, next_at)
    SELECT ${orgId}, s, '-infinity'::timestamptz FROM unnest(${scopes}::text[]) AS v(s)
    ON CONFLICT (org_id, scope) DO NOTHING`;
}

/**
 * Unless `to` is on the organization's do-not-call list: locks the scopes' rows (in scope order, so two
 * reservations never wait on each other crosswise), takes the later of the clock and their next allowed
 * instants, and moves each on by its interval. Returns that instant and the clock in epoch milliseconds, or
 * undefined when the number is listed. The rows must exist (ensureScopes).
 */
export async function reserveSlot(
  db: Db,
  orgId: string,
  to: string,
  scopes: { scope: string; intervalMs: number }[],
): Promise<{ slot_ms: number; now_ms: number } | undefined> {
  const [row] = await db<{ slot_ms: number; now_ms: number }[]>`
    WITH locked AS (
      SELECT next_at FROM dial_pacing
      WHERE org_id = ${orgId} AND scope = ANY(${scopes.map((s) => s.scope)}::text[])
      ORDER BY scope FOR UPDATE
    ), slot AS (
      SELECT greatest(clock_timestamp(), max(next_at)) AS at, clock_timestamp() AS now FROM locked
    )
    UPDATE dial_pacing p SET next_at = slot.at + v.ms * interval '1 millisecond'
    FROM slot, unnest(${scopes.map((s) => s.scope)}::text[], ${scopes.map((s) => s.intervalMs)}::float8[]) AS v(scope, ms)
    WHERE p.org_id = ${orgId} AND p.scope = v.scope
      AND NOT EXISTS (SELECT 1 FROM do_not_call_numbers WHERE org_id = ${orgId} AND number = ${to})
    RETURNING (extract(epoch FROM slot.at) * 1000)::float8 AS slot_ms, (extract(epoch FROM slot.now) * 1000)::float8 AS now_ms`;
  return row;
}
