import type { Db } from './client';

// The next instant a call may start, per organization and scope (migration 0064): a dial reserves its
// instant and moves the scopes on in one transaction, under the rows' locks, so every worker and every
// retried activity shares one spacing. Times are the database's clock, never the worker's.

export interface ScopeRow {
  scope: string;
  next_ms: number;
  now_ms: number;
}

/**
 * Locks the scopes' rows (made on first use), in the order given, and reads their next allowed instant and
 * the database's clock, both in epoch milliseconds. Call inside a transaction; callers pass the same order.
 */
export async function lockScopes(tx: Db, orgId: string, scopes: string[]): Promise<ScopeRow[]> {
  return tx<ScopeRow[]>`
    INSERT INTO dial_pacing (org_id, scope, next_at)
    SELECT ${orgId}, s, '-infinity'::timestamptz FROM unnest(${scopes}::text[]) WITH ORDINALITY AS v(s, n) ORDER BY n
    ON CONFLICT (org_id, scope) DO UPDATE SET next_at = dial_pacing.next_at
    RETURNING scope,
      CASE WHEN next_at = '-infinity' THEN 0 ELSE extract(epoch FROM next_at) * 1000 END::float8 AS next_ms,
      (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms`;
}

/** Moves each scope's next allowed instant on. */
export async function advanceScopes(tx: Db, orgId: string, moves: { scope: string; nextMs: number }[]): Promise<void> {
  await tx`
    UPDATE dial_pacing p SET next_at = to_timestamp(v.next_ms / 1000.0)
    FROM unnest(${moves.map((m) => m.scope)}::text[], ${moves.map((m) => m.nextMs)}::float8[]) AS v(scope, next_ms)
    WHERE p.org_id = ${orgId} AND p.scope = v.scope`;
}
