import { newId } from '../platform/ids';
import type { Sql } from './client';

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
export async function upsertOrganization(sql: Sql, externalId: string): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO organizations (id, external_id) VALUES (${newId()}, ${externalId})
    ON CONFLICT (external_id) DO UPDATE SET external_id = EXCLUDED.external_id
    RETURNING id`;
  return row!.id;
}

export async function upsertUser(sql: Sql, externalId: string): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO users (id, external_id) VALUES (${newId()}, ${externalId})
    ON CONFLICT (external_id) DO UPDATE SET external_id = EXCLUDED.external_id
    RETURNING id`;
  return row!.id;
}

export async function ensureMembership(sql: Sql, orgId: string, userId: string): Promise<void> {
  await sql`INSERT INTO memberships (org_id, user_id) VALUES (${orgId}, ${userId}) ON CONFLICT DO NOTHING`;
}

export async function findOrganizationByExternalId(sql: Sql, externalId: string): Promise<{ id: string } | undefined> {
  const [row]: [{ id: string }?] = await sql`SELECT id FROM organizations WHERE external_id = ${externalId}`;
  return row;
}

/** The organizations a user belongs to, as [external id, our id] pairs. */
export async function membershipsOf(sql: Sql, userId: string): Promise<[string, string][]> {
  const rows = await sql<{ external_id: string; id: string }[]>`
    SELECT o.external_id, o.id FROM memberships m JOIN organizations o ON o.id = m.org_id
    WHERE m.user_id = ${userId} ORDER BY o.external_id`;
  return rows.map((r) => [r.external_id, r.id]);
}

export async function insertApiKey(
  sql: Sql,
  key: Pick<ApiKeyRow, 'kind' | 'key_id' | 'secret_hash' | 'org_id' | 'user_id' | 'name' | 'scopes' | 'expires_at'>,
): Promise<ApiKeyRow> {
  const [row] = await sql<ApiKeyRow[]>`
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
export async function findApiKeyByKeyId(sql: Sql, kind: ApiKeyRow['kind'], keyId: string): Promise<ApiKeyWithOwners | undefined> {
  const [row]: [ApiKeyWithOwners?] = await sql`
    SELECT k.*, u.external_id AS user_external_id, o.external_id AS org_external_id
    FROM api_keys k JOIN users u ON u.id = k.user_id LEFT JOIN organizations o ON o.id = k.org_id
    WHERE k.key_id = ${keyId} AND k.kind = ${kind}`;
  return row;
}

export async function findApiKeyStatus(sql: Sql, id: string) {
  const [row]: [{ revoked_at: Date | null; expires_at: Date | null }?] =
    await sql`SELECT revoked_at, expires_at FROM api_keys WHERE id = ${id}`;
  return row;
}

export async function touchApiKey(sql: Sql, id: string): Promise<void> {
  await sql`UPDATE api_keys SET last_used_at = now() WHERE id = ${id}`;
}

/** Live (unrevoked) keys of an organization, or of a user, newest first. */
export async function listApiKeys(sql: Sql, owner: { orgId: string } | { userId: string }): Promise<ApiKeyWithOwners[]> {
  const filter =
    'orgId' in owner
      ? sql`k.kind = 'organization' AND k.org_id = ${owner.orgId}`
      : sql`k.kind = 'user' AND k.user_id = ${owner.userId}`;
  return sql<ApiKeyWithOwners[]>`
    SELECT k.*, u.external_id AS user_external_id, o.external_id AS org_external_id
    FROM api_keys k JOIN users u ON u.id = k.user_id LEFT JOIN organizations o ON o.id = k.org_id
    WHERE ${filter} AND k.revoked_at IS NULL ORDER BY k.created_at DESC, k.id DESC`;
}

/** Revokes one key of the owner; returns its key_id, or undefined when the owner has no such live key. */
export async function revokeApiKey(
  sql: Sql,
  id: string,
  owner: { orgId: string } | { userId: string },
): Promise<string | undefined> {
  const [row]: [{ key_id: string }?] =
    'orgId' in owner
      ? await sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${id} AND kind = 'organization'
          AND org_id = ${owner.orgId} AND revoked_at IS NULL RETURNING key_id`
      : await sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${id} AND kind = 'user'
          AND user_id = ${owner.userId} AND revoked_at IS NULL RETURNING key_id`;
  return row?.key_id;
}
