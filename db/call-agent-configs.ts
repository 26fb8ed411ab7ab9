import type { Db } from './client';

// What a campaign call placed at a voice-AI runtime runs with, read back when the runtime asks the
// service to run one of its tools: the call's conversation and the configuration the dispatcher
// rendered for it (the published version it names, else the latest published, under the contact's overrides).

export interface CallAgentConfig {
  conversation_id: string;
  status: string;
  agent_id: string | null;
  /** The published version the configuration came from (null: none is published). */
  agent_version: number | null;
  config: Record<string, unknown>;
}

const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

export async function callAgentConfig(db: Db, orgId: string, key: string): Promise<CallAgentConfig | undefined> {
  const [row]: [CallAgentConfig?] = await db`
    SELECT c.id AS conversation_id, c.status, c.agent_id, av.version AS agent_version,
           coalesce(av.config, '{}'::jsonb) || coalesce(cc.agent_config, '{}'::jsonb) AS config
    FROM conversations c
    LEFT JOIN campaign_contacts cc
      ON cc.org_id = c.org_id AND cc.id = (CASE WHEN c.contact_ref ~ ${UUID} THEN c.contact_ref::uuid END)
    LEFT JOIN LATERAL (
      SELECT v.version, v.config FROM agent_versions v
      WHERE v.org_id = c.org_id AND v.agent_id = c.agent_id AND v.published
        AND (c.agent_version IS NULL OR v.version = c.agent_version)
      ORDER BY v.version DESC LIMIT 1) av ON true
    WHERE c.org_id = ${orgId} AND c.idempotency_key = ${key} AND c.campaign_id IS NOT NULL`;
  return row;
}
