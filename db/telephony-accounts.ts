import type { Db } from './client';
import { TELEPHONY_PROVIDERS } from '../domain/integrations';
import { connectionColumns, connectionSource, getConnection, type ConnectionRow } from './integrations';

// The organization's telephony account: its one connection of a telephony provider (Twilio, Vapi) that is
// not revoked (migration 0045 keeps it one). Filtered by org_id, except the lookup a provider's callback
// makes by the connection id its URL names (the provider's signature is then checked with that account).

export async function liveTelephonyConnection(db: Db, orgId: string): Promise<ConnectionRow | undefined> {
  const [row]: [ConnectionRow?] = await db`
    SELECT ${connectionColumns(db)} FROM ${connectionSource(db)}
    WHERE c.org_id = ${orgId} AND c.kind = 'api_key' AND c.integration IN ${db(TELEPHONY_PROVIDERS)} AND c.status <> 'revoked'`;
  return row;
}

/** A callback's account, by the connection id in its URL (no organization known yet). */
export async function telephonyConnectionById(db: Db, id: string): Promise<ConnectionRow | undefined> {
  const [row]: [ConnectionRow?] = await db`
    SELECT ${connectionColumns(db)} FROM ${connectionSource(db)}
    WHERE c.id = ${id} AND c.kind = 'api_key' AND c.integration IN ${db(TELEPHONY_PROVIDERS)}`;
  return row;
}

/** Moves the connection from active to needs_reconnect; the row if it moved (once, however many calls saw the refusal). */
export async function markTelephonyNeedsReconnect(db: Db, orgId: string, id: string, reason: string): Promise<ConnectionRow | undefined> {
  const [moved]: [{ id: string }?] = await db`
    UPDATE integration_connections SET status = 'needs_reconnect', status_reason = ${reason}, updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id} AND status = 'active' RETURNING id`;
  return moved ? getConnection(db, orgId, moved.id) : undefined;
}
