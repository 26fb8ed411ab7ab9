import type { ConnectionStatus } from '../domain/integrations';
import type { Db } from './client';
import { keysetRows } from './kit/keyset';
import { onUnique } from './kit/unique';

// Connect tokens, connections and the per-organization redirect allowlist. Every query is filtered by
// org_id, except the two lookups an unauthenticated connect page makes by the token's hash or `state`
// (the token is the credential there; the row then names its organization).

export interface ConnectTokenRow {
  id: string;
  org_id: string;
  allowed_integrations: string[];
  end_user_id: string | null;
  connection_id: string | null;
  success_url: string;
  error_url: string;
  created_by: string;
  created_by_user_id: string | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  integration: string | null;
  oauth_state: string | null;
  code_verifier: string | null;
  completed_at: Date | null;
}

export interface ConnectionRow {
  id: string;
  org_id: string;
  integration: string;
  kind: 'oauth' | 'api_key';
  status: ConnectionStatus;
  external_account_id: string;
  external_account_label: string;
  granted_scopes: string[];
  end_user_id: string | null;
  connected_by: string;
  credential_id: string | null;
  status_reason: string | null;
  connected_at: Date;
  revoked_at: Date | null;
  created_at: Date;
  updated_at: Date;
  // From the credential: the last refresh and its error.
  last_refresh_at: Date | null;
  last_refresh_status: string | null;
  last_refresh_error: string | null;
  expires_at: Date | null;
}

export async function insertConnectToken(
  db: Db,
  orgId: string,
  id: string,
  fields: {
    tokenHash: string;
    allowedIntegrations: string[];
    endUserId: string | null;
    connectionId: string | null;
    successUrl: string;
    errorUrl: string;
    createdBy: string;
    createdByUserId: string | null;
    ttlSeconds: number;
  },
): Promise<ConnectTokenRow> {
  const [row] = await db<ConnectTokenRow[]>`
    INSERT INTO integration_connect_tokens (id, org_id, token_hash, allowed_integrations, end_user_id, connection_id,
      success_url, error_url, created_by, created_by_user_id, expires_at)
    VALUES (${id}, ${orgId}, ${fields.tokenHash}, ${fields.allowedIntegrations}, ${fields.endUserId}, ${fields.connectionId},
      ${fields.successUrl}, ${fields.errorUrl}, ${fields.createdBy}, ${fields.createdByUserId},
      now() + make_interval(secs => ${fields.ttlSeconds}))
    RETURNING *`;
  return row!;
}

/** The token behind a connect link (unauthenticated: the hash is the lookup key). */
export async function findConnectTokenByHash(db: Db, tokenHash: string): Promise<ConnectTokenRow | undefined> {
  const [row]: [ConnectTokenRow?] = await db`SELECT * FROM integration_connect_tokens WHERE token_hash = ${tokenHash}`;
  return row;
}

/**
 * Claims the callback of the consent running under `state` (the provider's redirect): the token as it
 * was, its completed_at still null only for the one caller that claimed it now.
 */
export async function claimCallback(db: Db, state: string): Promise<ConnectTokenRow | undefined> {
  const [row]: [ConnectTokenRow?] = await db`
    WITH old AS (SELECT * FROM integration_connect_tokens WHERE oauth_state = ${state} FOR UPDATE),
    claimed AS (
      UPDATE integration_connect_tokens t SET completed_at = now(), code_verifier = NULL
      FROM old WHERE t.id = old.id AND old.completed_at IS NULL RETURNING t.id)
    SELECT old.* FROM old`;
  return row;
}

/** Spends the token: only one caller wins, and only before it expires. */
export async function spendConnectToken(
  db: Db,
  orgId: string,
  id: string,
  fields: { integration: string; state: string; codeVerifier: string },
): Promise<boolean> {
  const rows = await db`
    UPDATE integration_connect_tokens SET used_at = now(), integration = ${fields.integration}, oauth_state = ${fields.state},
      code_verifier = ${fields.codeVerifier}
    WHERE org_id = ${orgId} AND id = ${id} AND used_at IS NULL AND expires_at > now()`;
  return rows.count > 0;
}

/** Forgets tokens expired over a day ago (called now and then by token creation). */
export async function pruneConnectTokens(db: Db, orgId: string): Promise<void> {
  await db`DELETE FROM integration_connect_tokens WHERE org_id = ${orgId} AND expires_at < now() - interval '1 day'`;
}

// ---- connections -----------------------------------------------------------------------------------

/** A connection (`c`) with its credential (`w`), whose last refresh and expiry the connection shows. */
export const connectionSource = (db: Db) =>
  db`integration_connections c LEFT JOIN workflow_credentials w ON w.org_id = c.org_id AND w.id = c.credential_id`;

export const connectionColumns = (db: Db) => db`
  c.id, c.org_id, c.integration, c.kind, c.status, c.external_account_id, c.external_account_label, c.granted_scopes, c.end_user_id,
  c.connected_by, c.credential_id, c.status_reason, c.connected_at, c.revoked_at, c.created_at, c.updated_at,
  w.last_refresh_at, w.last_refresh_status, w.last_refresh_error, w.expires_at`;

export async function listConnections(
  db: Db,
  orgId: string,
  filters: { status?: ConnectionStatus; integration?: string; end_user_id?: string },
  page: { limit: number; after?: { t: string; id: string } },
): Promise<(ConnectionRow & { cursor_t: string })[]> {
  const status = filters.status ? db`AND c.status = ${filters.status}` : db``;
  const integration = filters.integration ? db`AND c.integration = ${filters.integration}` : db``;
  const endUser = filters.end_user_id ? db`AND c.end_user_id = ${filters.end_user_id}` : db``;
  return keysetRows<ConnectionRow>(db, {
    select: connectionColumns(db),
    from: connectionSource(db),
    where: db`c.org_id = ${orgId} ${status} ${integration} ${endUser}`,
    at: 'c.created_at',
    id: 'c.id',
    ...page,
  });
}

export async function getConnection(
  db: Db,
  orgId: string,
  id: string,
  options: { lock?: boolean } = {},
): Promise<ConnectionRow | undefined> {
  const lock = options.lock ? db`FOR UPDATE OF c` : db``;
  const [row]: [ConnectionRow?] = await db`
    SELECT ${connectionColumns(db)} FROM ${connectionSource(db)}
    WHERE c.org_id = ${orgId} AND c.id = ${id} ${lock}`;
  return row;
}

/** The live connection of this external account, if the organization already has one. */
export async function findConnectionByAccount(
  db: Db,
  orgId: string,
  integration: string,
  externalAccountId: string,
): Promise<string | undefined> {
  const [row]: [{ id: string }?] = await db`
    SELECT id FROM integration_connections
    WHERE org_id = ${orgId} AND integration = ${integration} AND external_account_id = ${externalAccountId} AND status <> 'revoked'`;
  return row?.id;
}

export async function insertConnection(
  db: Db,
  orgId: string,
  id: string,
  fields: {
    integration: string;
    externalAccountId: string;
    externalAccountLabel: string;
    grantedScopes: string[];
    endUserId: string | null;
    connectedBy: string;
    credentialId: string;
    kind?: 'oauth' | 'api_key';
  },
  duplicate = 'The organization already has a connection of this account',
): Promise<void> {
  await onUnique(
    db`
    INSERT INTO integration_connections (id, org_id, integration, kind, status, external_account_id, external_account_label,
      granted_scopes, end_user_id, connected_by, credential_id)
    VALUES (${id}, ${orgId}, ${fields.integration}, ${fields.kind ?? 'oauth'}, 'active', ${fields.externalAccountId},
      ${fields.externalAccountLabel}, ${fields.grantedScopes}, ${fields.endUserId}, ${fields.connectedBy}, ${fields.credentialId})`,
    duplicate,
  );
}

/** A reconnect: fresh consent on the same connection (same id), active again. */
export async function reactivateConnection(
  db: Db,
  orgId: string,
  id: string,
  fields: { externalAccountLabel: string; grantedScopes: string[]; connectedBy: string; credentialId: string; endUserId: string | null },
): Promise<void> {
  await db`
    UPDATE integration_connections SET status = 'active', status_reason = NULL, revoked_at = NULL,
      external_account_label = ${fields.externalAccountLabel}, granted_scopes = ${fields.grantedScopes},
      connected_by = ${fields.connectedBy}, credential_id = ${fields.credentialId},
      end_user_id = coalesce(${fields.endUserId}, end_user_id), connected_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id}`;
}

/** Moves the active connection holding this credential to needs_reconnect; its id, if one moved. */
export async function markNeedsReconnect(db: Db, orgId: string, credentialId: string, reason: string): Promise<ConnectionRow | undefined> {
  const [moved]: [{ id: string }?] = await db`
    UPDATE integration_connections SET status = 'needs_reconnect', status_reason = ${reason}, updated_at = now()
    WHERE org_id = ${orgId} AND credential_id = ${credentialId} AND status = 'active' RETURNING id`;
  return moved ? getConnection(db, orgId, moved.id) : undefined;
}

/** The service user id of whoever connected the account (`connected_by` is `user:<external id>`), if a member still. */
export async function connectorUserId(db: Db, orgId: string, connectionId: string): Promise<string | undefined> {
  const [row]: [{ user_id: string }?] = await db`
    SELECT u.id AS user_id FROM integration_connections c
    JOIN users u ON 'user:' || u.external_id = c.connected_by
    JOIN memberships m ON m.user_id = u.id AND m.org_id = c.org_id
    WHERE c.org_id = ${orgId} AND c.id = ${connectionId}`;
  return row?.user_id;
}

export async function markRevoked(db: Db, orgId: string, id: string, reason: string): Promise<void> {
  await db`
    UPDATE integration_connections SET status = 'revoked', status_reason = ${reason}, credential_id = NULL,
      revoked_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id}`;
}

// ---- settings ----------------------------------------------------------------------------------------

export async function getAllowedOrigins(db: Db, orgId: string): Promise<{ origins: string[]; updated_at: Date } | undefined> {
  const [row]: [{ origins: string[]; updated_at: Date }?] = await db`
    SELECT allowed_redirect_origins AS origins, updated_at FROM integration_settings WHERE org_id = ${orgId}`;
  return row;
}

export async function putAllowedOrigins(
  db: Db,
  orgId: string,
  origins: string[],
  actor: string,
): Promise<{ origins: string[]; updated_at: Date }> {
  const [row] = await db<{ origins: string[]; updated_at: Date }[]>`
    INSERT INTO integration_settings (org_id, allowed_redirect_origins, modified_by) VALUES (${orgId}, ${origins}, ${actor})
    ON CONFLICT (org_id) DO UPDATE SET allowed_redirect_origins = EXCLUDED.allowed_redirect_origins,
      modified_by = EXCLUDED.modified_by, updated_at = now()
    RETURNING allowed_redirect_origins AS origins, updated_at`;
  return row!;
}
