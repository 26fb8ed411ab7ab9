import type { Db } from './client';
import { SPEECH_PROVIDERS } from '../domain/integrations';
import { connectionColumns, connectionSource, getConnection, type ConnectionRow } from './integrations';

// The organization's speech and model providers: at most one connection per provider that is not revoked
// (migration 0068), each an API key sealed in its workflow credential. Filtered by org_id.

/** Every provider connection of the organization that is not revoked (active or needing new keys). */
export async function liveSpeechConnections(db: Db, orgId: string): Promise<ConnectionRow[]> {
  return db<ConnectionRow[]>`
    SELECT ${connectionColumns(db)} FROM ${connectionSource(db)}
    WHERE c.org_id = ${orgId} AND c.kind = 'api_key' AND c.integration IN ${db(SPEECH_PROVIDERS)} AND c.status <> 'revoked'`;
}

/** New keys on the same connection: its fingerprint and label follow the key, and it is active again. */
export async function rekeySpeechConnection(
  db: Db,
  orgId: string,
  id: string,
  fields: { externalAccountId: string; externalAccountLabel: string; connectedBy: string },
): Promise<void> {
  await db`
    UPDATE integration_connections SET status = 'active', status_reason = NULL, external_account_id = ${fields.externalAccountId},
      external_account_label = ${fields.externalAccountLabel}, connected_by = ${fields.connectedBy}, connected_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id}`;
}

/** Moves the connection from active to needs_reconnect; the row if it moved (once, however many calls saw the refusal). */
export async function markSpeechNeedsReconnect(db: Db, orgId: string, id: string, reason: string): Promise<ConnectionRow | undefined> {
  const [moved]: [{ id: string }?] = await db`
    UPDATE integration_connections SET status = 'needs_reconnect', status_reason = ${reason}, updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id} AND status = 'active' RETURNING id`;
  return moved ? getConnection(db, orgId, moved.id) : undefined;
}
