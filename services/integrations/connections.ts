import * as credentialsDb from '../../db/credentials';
import * as db from '../../db/integrations';
import type { Db } from '../../db/client';
import type { ConnectionRow } from '../../db/integrations';
import { isDomainError, notFound } from '../../domain/errors';
import {
  SPEECH_PROVIDER_NAMES,
  TELEPHONY_PROVIDER_NAMES,
  isInvalidGrant,
  type ConnectionStatus,
  type SpeechProvider,
  type TelephonyProvider,
} from '../../domain/integrations';
import type { IntegrationProvider } from '../../platform/core/oauth-catalog';
import { revokeToken } from '../../platform/adapters/oauth/client';
import { refreshScheduleId } from '../../workflows/credential-messages';
import { pauseSchedule } from '../workflow-client';
import { deleteCredential } from '../credentials/crud';
import { readCredentialValue } from '../credentials/values';
import { onRefreshFailure } from '../credentials/refresh';
import type { ServiceDeps } from '../deps';
import { emitEvent } from '../notifications/emit';
import { CreatedCursor, decodeCursor, nextPage } from '../pagination';
import { iso } from '../views';
import { catalogOf, clientFor } from './catalog';

// Connected accounts: listed, read and revoked; a grant the provider refused moves its connection to
// needs_reconnect (the hook below, registered when this module loads).

export const connectionNotFound = () => notFound('Connection not found');

export function connectionView(row: ConnectionRow, catalog: Map<string, IntegrationProvider>) {
  const p = row.kind === 'oauth' ? catalog.get(row.integration) : undefined;
  return {
    id: row.id,
    organization_id: row.org_id,
    integration: row.integration,
    kind: row.kind,
    provider: {
      key: row.integration,
      name:
        p?.name ??
        TELEPHONY_PROVIDER_NAMES[row.integration as TelephonyProvider] ??
        SPEECH_PROVIDER_NAMES[row.integration as SpeechProvider] ??
        row.integration,
      simulated: p?.simulated ?? false,
    },
    status: row.status,
    status_reason: row.status_reason,
    external_account_id: row.external_account_id,
    external_account_label: row.external_account_label,
    granted_scopes: row.granted_scopes,
    end_user_id: row.end_user_id,
    connected_by: row.connected_by,
    connected_at: row.connected_at.toISOString(),
    credential_id: row.credential_id,
    expires_at: iso(row.expires_at),
    last_refresh_at: iso(row.last_refresh_at),
    last_refresh_status: row.last_refresh_status as 'success' | 'failed' | 'running' | null,
    last_refresh_error: row.last_refresh_error,
    revoked_at: iso(row.revoked_at),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export async function listConnections(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  query: { status?: ConnectionStatus; integration?: string; end_user_id?: string; limit: number; cursor?: string },
) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const rows = await db.listConnections(deps.sql, orgId, query, { limit: query.limit, after });
  const { data, next_cursor } = nextPage(rows, query.limit, (last) => ({ t: last.cursor_t, id: last.id }));
  const catalog = catalogOf(deps.config);
  return { data: data.map((r) => connectionView(r, catalog)), next_cursor };
}

export async function getConnection(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, id: string) {
  const row = await db.getConnection(deps.sql, orgId, id);
  if (!row) throw connectionNotFound();
  return connectionView(row, catalogOf(deps.config));
}

/**
 * Revokes the connection: at the provider where it can (the refresh token, which ends the grant, then
 * the access token), then deletes the credential (and so its schedule) and marks the connection
 * revoked. A provider that cannot be reached does not keep the tokens alive here: the reason says so.
 */
export async function deleteConnection(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'temporal' | 'logger'>,
  orgId: string,
  id: string,
): Promise<void> {
  const row = await db.getConnection(deps.sql, orgId, id);
  if (!row) throw connectionNotFound();
  if (row.status === 'revoked') return;
  let reason = 'Revoked here; the provider has no revocation endpoint';
  const p = catalogOf(deps.config).get(row.integration);
  if (row.credential_id && p?.revocation_url) {
    const value = await readCredentialValue(deps, orgId, row.credential_id);
    const secrets = (await clientFor(deps, orgId, p)) ?? {
      clientId: String(value?.client_id ?? p.client_id ?? ''),
      clientSecret: undefined,
    };
    try {
      if (typeof value?.refresh_token === 'string')
        await revokeToken(p, secrets, value.refresh_token, 'refresh_token', deps.config.INTEGRATION_HTTP_TIMEOUT_MS);
      if (typeof value?.access_token === 'string')
        await revokeToken(p, secrets, value.access_token, 'access_token', deps.config.INTEGRATION_HTTP_TIMEOUT_MS);
      reason = 'Revoked at the provider';
    } catch (error) {
      reason = `Revoked here; the provider's revocation failed: ${(error as Error).message}`.slice(0, 500);
      deps.logger.warn({ orgId, connectionId: id, integration: row.integration }, 'provider revocation failed');
    }
  }
  if (row.credential_id) {
    await deleteCredential(deps, orgId, row.credential_id).catch((error: unknown) => {
      if (!isDomainError(error, 'not_found')) throw error;
    });
  }
  await db.markRevoked(deps.sql, orgId, id, reason);
}

// ---- refresh failures --------------------------------------------------------------------------------

/** Tells whoever connected the account (besides any subscribers) that it needs a reconnect, in the caller's transaction. */
export async function announceNeedsReconnect(tx: Db, orgId: string, moved: ConnectionRow, error: string): Promise<void> {
  const connector = await db.connectorUserId(tx, orgId, moved.id);
  await emitEvent(tx, orgId, {
    event_type: 'integration.needs_reconnect',
    entity_type: 'integration_connection',
    entity_id: moved.id,
    recipient_user_ids: connector ? [connector] : [],
    payload: {
      connection_id: moved.id,
      integration: moved.integration,
      external_account_label: moved.external_account_label,
      error: error.slice(0, 500),
    },
  });
}

/**
 * A refresh the provider refused with `invalid_grant` moves the connection to needs_reconnect and
 * emits `integration.needs_reconnect` in the refresh's own transaction; its schedule is paused (a
 * reconnect resumes it), so a dead grant is not retried and reported every few minutes.
 */
onRefreshFailure(async (tx, deps, orgId, credentialId, error) => {
  if (!isInvalidGrant(error)) return;
  const moved = await db.markNeedsReconnect(
    tx,
    orgId,
    credentialId,
    'The provider refused the refresh token (invalid_grant): reconnect the account',
  );
  if (!moved) return;
  await announceNeedsReconnect(tx, orgId, moved, error);
  const credential = await credentialsDb.getCredential(tx, orgId, credentialId, { lock: true });
  if (credential && credential.refresh_policy.type !== 'manual') {
    await credentialsDb.updateCredential(
      tx,
      orgId,
      credentialId,
      { ...credential, refresh_policy: { ...credential.refresh_policy, paused: true } },
      credential.modified_by,
    );
    if (deps.temporal) await pauseSchedule({ temporal: deps.temporal }, refreshScheduleId(credentialId), 'Needs reconnect');
  }
});
