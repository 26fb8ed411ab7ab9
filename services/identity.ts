import * as identity from '../db/identity';
import type { ApiKeyRow, ApiKeyWithOwners } from '../db/identity';
import { notFound } from '../domain/errors';
import type { ServiceDeps } from './deps';
import { iso } from './views';

// Keys and tokens. Who may create, list or revoke them is the route's auth rule (api/auth); what is
// written and shown is here. The secret is minted by the caller (api/auth/tokens) and only its hash
// reaches this layer.

function keyView(row: ApiKeyRow, creatorExternalId: string) {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    key_id: row.key_id,
    organization_id: row.org_id,
    scopes: row.scopes,
    expires_at: iso(row.expires_at),
    last_used_at: iso(row.last_used_at),
    created_at: row.created_at.toISOString(),
    created_by: `user:${creatorExternalId}`,
  };
}

const listed = (rows: ApiKeyWithOwners[]) => rows.map((r) => keyView(r, r.user_external_id));

export interface Issued {
  keyId: string;
  secretHash: string;
  token: string;
}

export interface KeyRequest {
  name: string;
  scopes: string[];
  expiresAt: Date | null;
  userId: string;
  userExternalId: string;
}

/** Stores an organization API key and answers it with its one-time secret. */
export async function createOrganizationKey(deps: Pick<ServiceDeps, 'sql'>, orgId: string, request: KeyRequest, issued: Issued) {
  const row = await identity.insertApiKey(deps.sql, {
    kind: 'organization',
    key_id: issued.keyId,
    secret_hash: issued.secretHash,
    org_id: orgId,
    user_id: request.userId,
    name: request.name,
    scopes: request.scopes,
    expires_at: request.expiresAt,
  });
  return { ...keyView(row, request.userExternalId), pat_key: issued.token };
}

/** Stores a user's personal access token (no organization) and answers it with its one-time secret. */
export async function createUserToken(deps: Pick<ServiceDeps, 'sql'>, request: KeyRequest, issued: Issued) {
  const row = await identity.insertApiKey(deps.sql, {
    kind: 'user',
    key_id: issued.keyId,
    secret_hash: issued.secretHash,
    org_id: null,
    user_id: request.userId,
    name: request.name,
    scopes: request.scopes,
    expires_at: request.expiresAt,
  });
  return { ...keyView(row, request.userExternalId), token: issued.token };
}

export const listOrganizationKeys = async (deps: Pick<ServiceDeps, 'sql'>, orgId: string) =>
  listed(await identity.listOrganizationKeys(deps.sql, orgId));

export const listUserTokens = async (deps: Pick<ServiceDeps, 'sql'>, userId: string) =>
  listed(await identity.listUserTokens(deps.sql, userId));

/** Revokes an organization key (soft delete); the caller drops it from its token cache. */
export async function revokeOrganizationKey(deps: Pick<ServiceDeps, 'sql'>, orgId: string, id: string): Promise<void> {
  if (!(await identity.revokeOrganizationKey(deps.sql, orgId, id))) throw notFound('API key not found');
}

export async function revokeUserToken(deps: Pick<ServiceDeps, 'sql'>, userId: string, id: string): Promise<void> {
  if (!(await identity.revokeUserToken(deps.sql, userId, id))) throw notFound('Token not found');
}
