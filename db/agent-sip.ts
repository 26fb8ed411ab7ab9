import type { Db } from './client';

// An agent's SIP endpoint (one per agent): the address, which provider made it, the provider's id of
// it (Twilio's SIP domain sid) and its state. `recorded`: the address only (the simulated dialer,
// Vapi); `provisioning`: written before the provider is asked, removed if it fails; `active`: the
// provider holds it.

export type SipState = 'recorded' | 'provisioning' | 'active';

export interface SipEndpointRow {
  agent_id: string;
  org_id: string;
  sip_uri: string;
  provider: string;
  provider_id: string | null;
  state: SipState;
  /** Who may call it: a username and password, or IP addresses (null: nobody was let in, or nothing to let in). */
  auth_kind: 'credentials' | 'ip_addresses' | null;
  auth_username: string | null;
  /** What the provider made to let callers in (Twilio's list and mapping sids), removed with the endpoint. */
  auth_resources: Record<string, string>;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function getSipEndpoint(db: Db, orgId: string, agentId: string): Promise<SipEndpointRow | undefined> {
  const [row]: [SipEndpointRow?] = await db`SELECT * FROM agent_sip_endpoints WHERE org_id = ${orgId} AND agent_id = ${agentId}`;
  return row;
}

/** The endpoint a provider holds for this agent, whatever the organization (the provider's webhook names only the agent). */
export async function activeSipEndpoint(db: Db, provider: string, agentId: string): Promise<SipEndpointRow | undefined> {
  const [row]: [SipEndpointRow?] = await db`
    SELECT * FROM agent_sip_endpoints WHERE agent_id = ${agentId} AND provider = ${provider} AND state = 'active'`;
  return row;
}

/** Writes the endpoint in `state` (recorded or provisioning), replacing any other; its creation time restarts. */
export async function writeSipEndpoint(
  db: Db,
  orgId: string,
  agentId: string,
  endpoint: { sip_uri: string; provider: string; state: 'recorded' | 'provisioning' },
  actor: string,
): Promise<SipEndpointRow> {
  const [row] = await db<SipEndpointRow[]>`
    INSERT INTO agent_sip_endpoints (agent_id, org_id, sip_uri, provider, state, created_by)
    VALUES (${agentId}, ${orgId}, ${endpoint.sip_uri}, ${endpoint.provider}, ${endpoint.state}, ${actor})
    ON CONFLICT (agent_id) DO UPDATE SET sip_uri = EXCLUDED.sip_uri, provider = EXCLUDED.provider, provider_id = NULL,
      auth_kind = NULL, auth_username = NULL, auth_resources = '{}',
      state = EXCLUDED.state, created_by = EXCLUDED.created_by, created_at = now(), updated_at = now()
    RETURNING *`;
  return row!;
}

/** The provider made it: active, with its id; undefined when the row was removed meanwhile. */
export async function activateSipEndpoint(
  db: Db,
  orgId: string,
  agentId: string,
  made: { sip_uri: string; provider_id: string },
): Promise<SipEndpointRow | undefined> {
  const [row]: [SipEndpointRow?] = await db`
    UPDATE agent_sip_endpoints SET state = 'active', sip_uri = ${made.sip_uri}, provider_id = ${made.provider_id}, updated_at = now()
    WHERE org_id = ${orgId} AND agent_id = ${agentId} AND state = 'provisioning'
    RETURNING *`;
  return row;
}

/** Removes the endpoint; `onlyProvisioning` removes it only while it is still being made. */
export async function deleteSipEndpoint(db: Db, orgId: string, agentId: string, onlyProvisioning = false): Promise<boolean> {
  const rows = onlyProvisioning
    ? await db`DELETE FROM agent_sip_endpoints WHERE org_id = ${orgId} AND agent_id = ${agentId} AND state = 'provisioning' RETURNING agent_id`
    : await db`DELETE FROM agent_sip_endpoints WHERE org_id = ${orgId} AND agent_id = ${agentId} RETURNING agent_id`;
  return rows.length > 0;
}

/** Records who may call the endpoint and what the provider made for it; undefined when the row is gone. */
export async function setSipAuth(
  db: Db,
  orgId: string,
  agentId: string,
  auth: { kind: 'credentials' | 'ip_addresses'; username: string | null; resources: Record<string, string> },
): Promise<SipEndpointRow | undefined> {
  const [row]: [SipEndpointRow?] = await db`
    UPDATE agent_sip_endpoints SET auth_kind = ${auth.kind}, auth_username = ${auth.username},
           auth_resources = ${db.json(auth.resources)}, updated_at = now()
    WHERE org_id = ${orgId} AND agent_id = ${agentId}
    RETURNING *`;
  return row;
}
