import type { Db } from './client';
import { LEASE_SHARE_OF_REMAINING, leaseSize } from '../domain/rate-limits';

export interface Lease {
  /** The window's count once this lease is taken: every process's leases so far. */
  used: number;
  /** Requests this lease holds (0: the quota is spent). */
  granted: number;
}

/**
 * Reserves the next lease of `subject`'s quota in the window ending at `windowEndsAt`, in one upsert: the
 * first lease of a window inserts its row, later ones add to it while the quota lasts. A lease is at most
 * `leaseMax` and an eighth of what is left (domain/rate-limits.ts, leaseSize), so `used` never passes the quota.
 */
export async function takeLease(db: Db, subject: string, windowEndsAt: Date, quota: number, leaseMax: number): Promise<Lease> {
  const first = leaseSize(quota, 0, leaseMax);
  const [row]: [Lease?] = await db`
    INSERT INTO rate_limit_windows AS w (subject, window_ends_at, used, granted)
    VALUES (${subject}, ${windowEndsAt}, ${first}::int, ${first}::int)
    ON CONFLICT (subject, window_ends_at) DO UPDATE
      SET granted = least(${leaseMax}::int, ${quota}::int - w.used, greatest(1, ceil((${quota}::int - w.used) / ${LEASE_SHARE_OF_REMAINING}::numeric)::int)),
          used = w.used + least(${leaseMax}::int, ${quota}::int - w.used, greatest(1, ceil((${quota}::int - w.used) / ${LEASE_SHARE_OF_REMAINING}::numeric)::int))
      WHERE w.used < ${quota}::int
    RETURNING used, granted`;
  return row ?? { used: quota, granted: 0 };
}

/** Forgets windows that ended before `before`, at most `limit` of them. */
export async function sweepWindows(db: Db, before: Date, limit = 10_000): Promise<number> {
  const rows = await db`
    DELETE FROM rate_limit_windows WHERE ctid IN (
      SELECT ctid FROM rate_limit_windows WHERE window_ends_at < ${before} LIMIT ${limit}
    )`;
  return rows.count;
}

/** Returns `n` leased requests a process did not serve to the window's count, while the window lasts. */
export async function returnUnserved(db: Db, subject: string, windowEndsAt: Date, n: number): Promise<void> {
  await db`
    UPDATE rate_limit_windows SET used = greatest(0, used - ${n}::int)
    WHERE subject = ${subject} AND window_ends_at = ${windowEndsAt} AND window_ends_at > now()`;
}
