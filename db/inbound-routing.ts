import type { Db } from './client';
import type { PhoneNumberRow } from './phone-numbers';

// Inbound calls through the provider: which numbers are pointed at the service (routed_at, and what they
// pointed at before in routed_previous), who answers a number or a SIP number, and a ringing inbound
// conversation ended by the provider's status callback before the engine took it.

export interface RoutedNumberRow extends PhoneNumberRow {
  routed_at: Date | null;
  routed_previous: Record<string, unknown> | null;
}

/**
 * The organization's numbers among `ids` whose provider does not show what the inventory says, locked:
 * one with an inbound agent not yet pointed at the service, or one pointed at it that no agent answers.
 * Numbers the provider does not know (registered by hand) have nothing to point.
 */
export async function numbersOutOfRoute(db: Db, orgId: string, ids: string[]): Promise<RoutedNumberRow[]> {
  if (ids.length === 0) return [];
  return db<RoutedNumberRow[]>`
    SELECT * FROM phone_numbers
    WHERE org_id = ${orgId} AND id = ANY(${ids}::uuid[]) AND provider_number_id IS NOT NULL
      AND ((inbound_agent_id IS NOT NULL AND routed_at IS NULL) OR (inbound_agent_id IS NULL AND routed_at IS NOT NULL))
    ORDER BY number FOR UPDATE`;
}

/** Keeps what the number pointed at before the service (the first thing kept stays: `previous` null keeps it). */
export async function keepPrevious(db: Db, id: string, previous: Record<string, unknown> | null): Promise<void> {
  if (previous === null) return;
  await db`UPDATE phone_numbers SET routed_previous = coalesce(routed_previous, ${db.json(previous as never)}) WHERE id = ${id}`;
}

export async function markRouted(db: Db, id: string): Promise<void> {
  await db`UPDATE phone_numbers SET routed_at = now(), updated_at = now() WHERE id = ${id}`;
}

export async function markRestored(db: Db, id: string): Promise<void> {
  await db`UPDATE phone_numbers SET routed_at = NULL, routed_previous = NULL, updated_at = now() WHERE id = ${id}`;
}

/** The agent's numbers it answers inbound, locked, and no longer answered by it. */
export async function releaseInbound(db: Db, orgId: string, agentId: string): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    UPDATE phone_numbers SET inbound_agent_id = NULL, updated_at = now()
    WHERE org_id = ${orgId} AND inbound_agent_id = ${agentId}
    RETURNING id`;
  return rows.map((r) => r.id);
}

/** One number, locked, answered by nobody from now on (a release: the row goes after the provider is put back). */
export async function unanswerNumber(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`
    UPDATE phone_numbers SET inbound_agent_id = NULL, outbound_agent_id = NULL, updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id} RETURNING id`;
  return rows.length > 0;
}

export interface Answerer {
  org_id: string;
  agent_id: string;
  version: number;
}

/**
 * Who answers a call to `number` at `provider`: the organization's (or, for the deployment's shared account,
 * any organization's, the one that pointed it last) number with an inbound agent that is active and published.
 */
export async function numberAnswerer(db: Db, provider: string, number: string, orgId: string | null): Promise<Answerer | undefined> {
  const [row]: [Answerer?] = await db`
    SELECT p.org_id, a.id AS agent_id, a.published_version AS version
    FROM phone_numbers p JOIN agents a ON a.org_id = p.org_id AND a.id = p.inbound_agent_id
    WHERE p.number = ${number} AND a.active AND a.published_version IS NOT NULL
      AND (p.provider IS NULL OR p.provider = ${provider})
      ${orgId ? db`AND p.org_id = ${orgId}` : db``}
    ORDER BY p.routed_at DESC NULLS LAST, p.updated_at DESC
    LIMIT 1`;
  return row;
}

/** Who answers a call to a provider's number by its id (Vapi names the number it was called on by id). */
export async function providerNumberAnswerer(
  db: Db,
  provider: string,
  providerNumberId: string,
  orgId: string | null,
): Promise<Answerer | undefined> {
  const [row]: [Answerer?] = await db`
    SELECT p.org_id, a.id AS agent_id, a.published_version AS version
    FROM phone_numbers p JOIN agents a ON a.org_id = p.org_id AND a.id = p.inbound_agent_id
    WHERE p.provider = ${provider} AND p.provider_number_id = ${providerNumberId} AND a.active AND a.published_version IS NOT NULL
      ${orgId ? db`AND p.org_id = ${orgId}` : db``}
    ORDER BY p.routed_at DESC NULLS LAST
    LIMIT 1`;
  if (row) return row;
  // A SIP number made for an agent's SIP endpoint.
  const [sip]: [Answerer?] = await db`
    SELECT s.org_id, a.id AS agent_id, a.published_version AS version
    FROM agent_sip_endpoints s JOIN agents a ON a.org_id = s.org_id AND a.id = s.agent_id
    WHERE s.provider = ${provider} AND s.provider_id = ${providerNumberId} AND s.state = 'active' AND a.published_version IS NOT NULL
      ${orgId ? db`AND s.org_id = ${orgId}` : db``}`;
  return sip;
}

/**
 * Ends an inbound conversation the engine never took (still ringing: the caller hung up first, or the call
 * failed) as the provider reports it; undefined when there is none to end.
 */
export async function endRingingInbound(
  db: Db,
  callSid: string,
  orgId: string | null,
  end: { status: 'no_answer' | 'failed'; reason: string },
): Promise<{ id: string } | undefined> {
  const [row]: [{ id: string }?] = await db`
    UPDATE conversations SET status = ${end.status}, end_reason = ${end.reason}, ended_at = now(), duration_seconds = 0, updated_at = now()
    WHERE call_id = ${callSid} AND channel IN ('twilio', 'sip') AND direction = 'inbound' AND campaign_id IS NULL
      AND status = 'ringing' AND ended_at IS NULL ${orgId ? db`AND org_id = ${orgId}` : db``}
    RETURNING id`;
  return row;
}

/** The published version of each of these agents of the organization (null: none published). */
export async function publishedVersions(db: Db, orgId: string, agentIds: string[]): Promise<Map<string, number | null>> {
  if (agentIds.length === 0) return new Map();
  const rows = await db<{ id: string; published_version: number | null }[]>`
    SELECT id, published_version FROM agents WHERE org_id = ${orgId} AND id = ANY(${agentIds}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r.published_version]));
}
