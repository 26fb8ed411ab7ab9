import type { Db } from './client';

/** Whose key: the organization and the credential (`key:<api key id>` or `user:<user id>`). */
export interface KeyScope {
  orgId: string;
  principal: string;
  key: string;
}

export interface KeyRow {
  fingerprint: Buffer;
  claim: string;
  /** Null while its request runs. */
  status: number | null;
  locked_until: Date | null;
  response_headers: Record<string, string | string[]> | null;
  response_key_id: string | null;
  response_body: string | null;
}

export interface NewClaim {
  fingerprint: Buffer;
  method: string;
  path: string;
  claim: string;
  lockMs: number;
  ttlSeconds: number;
}

/**
 * Writes the key's row as running under `claim`, in a statement of its own (so a concurrent duplicate sees
 * it at once): a new key, an expired one, or one whose holder's lock lapsed while running the same request.
 * Returns whether this claim holds the key; otherwise the caller reads the row that holds it.
 */
export async function claimKey(db: Db, scope: KeyScope, c: NewClaim): Promise<boolean> {
  const rows = await db`
    INSERT INTO idempotency_keys AS k (org_id, principal, key, fingerprint, method, path, claim, locked_until, expires_at)
    VALUES (${scope.orgId}, ${scope.principal}, ${scope.key}, ${c.fingerprint}, ${c.method}, ${c.path}, ${c.claim},
            now() + ${c.lockMs} * interval '1 millisecond', now() + ${c.ttlSeconds} * interval '1 second')
    ON CONFLICT (org_id, principal, key) DO UPDATE
      SET fingerprint = excluded.fingerprint, method = excluded.method, path = excluded.path, claim = excluded.claim,
          locked_until = excluded.locked_until, status = NULL, response_headers = NULL, response_key_id = NULL,
          response_body = NULL, created_at = now(), completed_at = NULL, expires_at = excluded.expires_at
      WHERE k.expires_at <= now()
         OR (k.status IS NULL AND k.locked_until <= now() AND k.fingerprint = excluded.fingerprint)
    RETURNING claim`;
  return rows.length === 1;
}

/** The key's live row (not expired), or undefined. */
export async function readKey(db: Db, scope: KeyScope): Promise<KeyRow | undefined> {
  const [row]: [KeyRow?] = await db`
    SELECT fingerprint, claim, status, locked_until, response_headers, response_key_id, response_body
    FROM idempotency_keys
    WHERE org_id = ${scope.orgId} AND principal = ${scope.principal} AND key = ${scope.key} AND expires_at > now()`;
  return row;
}

export interface StoredAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  keyId: string;
  body: string;
}

/** Stores the answer of the request that holds the key; false when its claim was taken over meanwhile. */
export async function completeKey(db: Db, scope: KeyScope, claim: string, answer: StoredAnswer): Promise<boolean> {
  const rows = await db`
    UPDATE idempotency_keys
    SET status = ${answer.status}, response_headers = ${db.json(answer.headers)}, response_key_id = ${answer.keyId},
        response_body = ${answer.body}, completed_at = now(), locked_until = NULL
    WHERE org_id = ${scope.orgId} AND principal = ${scope.principal} AND key = ${scope.key}
      AND claim = ${claim} AND status IS NULL`;
  return rows.count === 1;
}

/** Frees a key whose request left no answer worth keeping (a 5xx): the client may send it again. */
export async function releaseKey(db: Db, scope: KeyScope, claim: string): Promise<void> {
  await db`
    DELETE FROM idempotency_keys
    WHERE org_id = ${scope.orgId} AND principal = ${scope.principal} AND key = ${scope.key}
      AND claim = ${claim} AND status IS NULL`;
}

/** Deletes keys past their expiry, at most `limit` of them. */
export async function sweepKeys(db: Db, limit = 10_000): Promise<number> {
  const rows = await db`
    DELETE FROM idempotency_keys WHERE ctid IN (
      SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT ${limit}
    )`;
  return rows.count;
}
