import { newId } from '../platform/core/ids';
import type { Db, Sql } from './client';

export interface ApiKeyRow {
  id: string;
  kind: 'organization' | 'user';
  key_id: string;
  secret_hash: string;
  org_id: string | null;
  user_id: string;
  name: string;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

/** Organization by the identity provider's id, created on first sight. */
export async function upsertOrganization(db: Sql, externalId: string): Promise<string> {
  const [row] = await db<{ id: string }[]>`
    INSERT INTO organizations (id, external_id) VALUES (${newId()}, ${externalId})
    ON CONFLICT (external_id) DO UPDATE SET external_id = EXCLUDED.external_id
    RETURNING id`;
  return row!.id;
}

export async function upsertUser(db: Sql, externalId: string): Promise<string> {
  const [row] = await db<{ id: string }[]>`
    INSERT INTO users (id, external_id) VALUES (${newId()}, ${externalId})
    ON CONFLICT (external_id) DO UPDATE SET external_id = EXCLUDED.external_id
    RETURNING id`;
  return row!.id;
}

/** Keeps the identity provider's `email` claim on the user (notifications mail it); users are global. */
export async function setUserEmail(db: Sql, userId: string, email: string): Promise<void> {
  await db`UPDATE users SET email = ${email} WHERE id = ${userId} AND email IS DISTINCT FROM ${email}`;
}

/**
 * Brings a user's memberships in line with a session: every claimed organization is a membership, the
 * active one records the session's scopes, and when the session lists all memberships (`org_ids`)
 * the ones it no longer lists are removed.
 */
export async function syncSessionMemberships(
  db: Sql,
  userId: string,
  session: { orgIds: string[]; activeOrgId: string | null; scopes: string[]; complete: boolean },
): Promise<void> {
  await db.begin(async (tx) => {
    for (const orgId of session.orgIds) {
      const scopes = orgId === session.activeOrgId ? session.scopes : null;
      await tx`
        INSERT INTO memberships (org_id, user_id, scopes) VALUES (${orgId}, ${userId}, ${scopes})
        ON CONFLICT (org_id, user_id) DO UPDATE
          SET scopes = coalesce(EXCLUDED.scopes, memberships.scopes),
              updated_at = CASE WHEN EXCLUDED.scopes IS NULL THEN memberships.updated_at ELSE now() END`;
    }
    if (session.complete) {
      await tx`DELETE FROM memberships WHERE user_id = ${userId} AND NOT (org_id = ANY(${session.orgIds}::uuid[]))`;
    }
  });
}

export async function findOrganizationByExternalId(db: Sql, externalId: string): Promise<{ id: string } | undefined> {
  const [row]: [{ id: string }?] = await db`SELECT id FROM organizations WHERE external_id = ${externalId}`;
  return row;
}

export interface Membership {
  external_id: string;
  id: string;
  /** The user's scopes in the organization; null when no session was ever active there. */
  scopes: string[] | null;
}

/** The organizations a user belongs to. */
export async function membershipsOf(db: Sql, userId: string): Promise<Membership[]> {
  return db<Membership[]>`
    SELECT o.external_id, o.id, m.scopes FROM memberships m JOIN organizations o ON o.id = m.org_id
    WHERE m.user_id = ${userId} ORDER BY o.external_id`;
}

export async function insertApiKey(
  db: Sql,
  key: Pick<ApiKeyRow, 'kind' | 'key_id' | 'secret_hash' | 'org_id' | 'user_id' | 'name' | 'scopes' | 'expires_at'>,
): Promise<ApiKeyRow> {
  const [row] = await db<ApiKeyRow[]>`
    INSERT INTO api_keys (id, kind, key_id, secret_hash, org_id, user_id, name, scopes, expires_at)
    VALUES (${newId()}, ${key.kind}, ${key.key_id}, ${key.secret_hash}, ${key.org_id}, ${key.user_id},
            ${key.name}, ${key.scopes}, ${key.expires_at})
    RETURNING *`;
  return row!;
}

export interface ApiKeyWithOwners extends ApiKeyRow {
  user_external_id: string;
  org_external_id: string | null;
}

/** A key by its public lookup id, with the external ids of its user and organization. */
/** A key by its public id, and whether `address` proved it (a live row in api_key_proofs). */
export async function findApiKeyByKeyId(
  db: Sql,
  kind: ApiKeyRow['kind'],
  keyId: string,
  address: string,
): Promise<(ApiKeyWithOwners & { address_proven: boolean }) | undefined> {
  const [row]: [(ApiKeyWithOwners & { address_proven: boolean })?] = await db`
    SELECT k.*, u.external_id AS user_external_id, o.external_id AS org_external_id,
      EXISTS (SELECT 1 FROM api_key_proofs p WHERE p.key_id = k.id AND p.address = ${address} AND p.expires_at > now()) AS address_proven
    FROM api_keys k JOIN users u ON u.id = k.user_id LEFT JOIN organizations o ON o.id = k.org_id
    WHERE k.key_id = ${keyId} AND k.kind = ${kind}`;
  return row;
}

/** The addresses with a live proof of a key, at most `limit` of them. */
export async function listApiKeyProofAddresses(db: Sql, kind: ApiKeyRow['kind'], keyId: string, limit: number): Promise<string[]> {
  const rows = await db<{ address: string }[]>`
    SELECT p.address FROM api_key_proofs p JOIN api_keys k ON k.id = p.key_id
    WHERE k.key_id = ${keyId} AND k.kind = ${kind} AND p.expires_at > now()
    LIMIT ${limit}`;
  return rows.map((r) => r.address);
}

/** Records (or extends) that `address` proved a key; the key's lapsed proofs are dropped on the way. */
export async function recordApiKeyProof(db: Sql, keyRowId: string, address: string, ttlSeconds: number): Promise<void> {
  await db`
    WITH lapsed AS (DELETE FROM api_key_proofs WHERE key_id = ${keyRowId} AND address <> ${address} AND expires_at <= now())
    INSERT INTO api_key_proofs (key_id, address, expires_at)
    VALUES (${keyRowId}, ${address}, now() + make_interval(secs => ${ttlSeconds}))
    ON CONFLICT (key_id, address) DO UPDATE SET expires_at = EXCLUDED.expires_at`;
}

export async function findApiKeyStatus(db: Sql, id: string) {
  const [row]: [{ revoked_at: Date | null; expires_at: Date | null }?] =
    await db`SELECT revoked_at, expires_at FROM api_keys WHERE id = ${id}`;
  return row;
}

export async function touchApiKey(db: Sql, id: string): Promise<void> {
  await db`UPDATE api_keys SET last_used_at = now() WHERE id = ${id}`;
}

const KEY_COLUMNS = (db: Db) => db`
  k.*, u.external_id AS user_external_id, o.external_id AS org_external_id
  FROM api_keys k JOIN users u ON u.id = k.user_id LEFT JOIN organizations o ON o.id = k.org_id`;

/** Live (unrevoked) organization API keys of an organization, newest first. */
export async function listOrganizationKeys(db: Db, orgId: string): Promise<ApiKeyWithOwners[]> {
  return db<ApiKeyWithOwners[]>`
    SELECT ${KEY_COLUMNS(db)}
    WHERE k.kind = 'organization' AND k.org_id = ${orgId} AND k.revoked_at IS NULL ORDER BY k.created_at DESC, k.id DESC`;
}

/** Live (unrevoked) personal access tokens of a user, newest first; they belong to no organization. */
export async function listUserTokens(db: Db, userId: string): Promise<ApiKeyWithOwners[]> {
  return db<ApiKeyWithOwners[]>`
    SELECT ${KEY_COLUMNS(db)}
    WHERE k.kind = 'user' AND k.user_id = ${userId} AND k.revoked_at IS NULL ORDER BY k.created_at DESC, k.id DESC`;
}

/** Revokes one organization key; its key_id, or undefined when the organization has no such live key. */
export async function revokeOrganizationKey(db: Db, orgId: string, id: string): Promise<string | undefined> {
  const [row]: [{ key_id: string }?] = await db`
    UPDATE api_keys SET revoked_at = now()
    WHERE id = ${id} AND kind = 'organization' AND org_id = ${orgId} AND revoked_at IS NULL RETURNING key_id`;
  return row?.key_id;
}

/** Revokes one token of the user; its key_id, or undefined when the user has no such live token. */
export async function revokeUserToken(db: Db, userId: string, id: string): Promise<string | undefined> {
  const [row]: [{ key_id: string }?] = await db`
    UPDATE api_keys SET revoked_at = now()
    WHERE id = ${id} AND kind = 'user' AND user_id = ${userId} AND revoked_at IS NULL RETURNING key_id`;
  return row?.key_id;
}
