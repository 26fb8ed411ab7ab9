import type { Db } from './client';
import { type CreatedKey, keysetPage } from './kit/keyset';
import { setColumns } from './kit/partial-update';

// SQL of webhooks to integrators: endpoints, and messages with their fan-out to deliveries (the outbox),
// written in the transaction of the change; deliveries and attempts are in db/webhook-deliveries.ts.
// Every function filters by org_id.

/** The channel a new or resent delivery wakes the relay on (`<org_id>:<endpoint_id>`); delivered at commit. */
export const DELIVERY_CHANNEL = 'webhook_deliveries';

export interface EndpointRow {
  id: string;
  org_id: string;
  url: string;
  description: string;
  event_types: string[] | null;
  enabled: boolean;
  disabled_reason: 'manual' | 'failing' | null;
  disabled_at: Date | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  last_success_at: Date | null;
  created_by: string;
  modified_by: string;
  created_at: Date;
  updated_at: Date;
}

/** The sealed secrets of an endpoint, read only where a message is signed or a secret rotated. */
export interface SealedSecrets {
  secret_key_id: string;
  secret_ciphertext: string;
  previous_secret_key_id: string | null;
  previous_secret_ciphertext: string | null;
  /** Set only while the previous secret still signs. */
  previous_secret_expires_at: Date | null;
}

export interface Sealed {
  key_id: string;
  ciphertext: string;
}

// Every column but the sealed secrets; the previous secret's expiry only while it is ahead.
const endpointColumns = (db: Db) => db`
  id, org_id, url, description, event_types, enabled, disabled_reason, disabled_at,
  CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_expires_at,
  failing_since, last_success_at, created_by, modified_by, created_at, updated_at`;

export interface NewEndpoint {
  id: string;
  url: string;
  description: string;
  event_types: string[] | null;
  enabled: boolean;
  secret: Sealed;
  actor: string;
}

export async function insertEndpoint(db: Db, orgId: string, e: NewEndpoint): Promise<EndpointRow> {
  const [row] = await db<EndpointRow[]>`
    INSERT INTO webhook_endpoints (id, org_id, url, description, event_types, enabled, disabled_reason, disabled_at,
                                   secret_key_id, secret_ciphertext, created_by, modified_by)
    VALUES (${e.id}, ${orgId}, ${e.url}, ${e.description}, ${e.event_types}::text[], ${e.enabled},
            ${e.enabled ? null : 'manual'}, ${e.enabled ? null : db`now()`}, ${e.secret.key_id}, ${e.secret.ciphertext},
            ${e.actor}, ${e.actor})
    RETURNING ${endpointColumns(db)}`;
  return row!;
}

export async function listEndpoints(
  db: Db,
  orgId: string,
  filters: { enabled?: boolean },
  page: { limit: number; after?: CreatedKey },
): Promise<{ rows: (EndpointRow & { cursor_t: string })[]; total: number }> {
  const where = filters.enabled === undefined ? db`org_id = ${orgId}` : db`org_id = ${orgId} AND enabled = ${filters.enabled}`;
  return keysetPage<EndpointRow>(db, { select: endpointColumns(db), from: db`webhook_endpoints`, where, ...page });
}

export async function getEndpoint(db: Db, orgId: string, id: string, options: { lock?: boolean } = {}): Promise<EndpointRow | undefined> {
  const lock = options.lock ? db`FOR UPDATE` : db``;
  const [row]: [EndpointRow?] =
    await db`SELECT ${endpointColumns(db)} FROM webhook_endpoints WHERE org_id = ${orgId} AND id = ${id} ${lock}`;
  return row;
}

export interface EndpointPatch {
  url?: string;
  description?: string;
  event_types?: string[] | null;
}

/** Writes the named fields; `enabled` moves the endpoint on or off (a manual disable, or clearing any). */
export async function updateEndpoint(
  db: Db,
  orgId: string,
  id: string,
  patch: EndpointPatch,
  enabled: boolean | undefined,
  actor: string,
): Promise<EndpointRow | undefined> {
  const values = { ...patch, modified_by: actor };
  const toggle =
    enabled === undefined
      ? db``
      : enabled
        ? // Enabled again: its failure streak starts afresh (an endpoint already on keeps its own).
          db`, enabled = true, disabled_reason = NULL, disabled_at = NULL, failing_since = CASE WHEN enabled THEN failing_since END`
        : db`, enabled = false, disabled_reason = CASE WHEN enabled THEN 'manual' ELSE disabled_reason END,
              disabled_at = CASE WHEN enabled THEN now() ELSE disabled_at END`;
  const [row]: [EndpointRow?] = await db`
    UPDATE webhook_endpoints SET ${setColumns(db, values, ['url', 'description', 'event_types', 'modified_by'])}, updated_at = now() ${toggle}
    WHERE org_id = ${orgId} AND id = ${id}
    RETURNING ${endpointColumns(db)}`;
  return row;
}

export async function deleteEndpoint(db: Db, orgId: string, id: string): Promise<boolean> {
  const result = await db`DELETE FROM webhook_endpoints WHERE org_id = ${orgId} AND id = ${id}`;
  return result.count > 0;
}

export async function getSealedSecrets(db: Db, orgId: string, id: string): Promise<SealedSecrets | undefined> {
  const [row]: [SealedSecrets?] = await db`
    SELECT secret_key_id, secret_ciphertext,
           CASE WHEN previous_secret_expires_at > now() THEN previous_secret_key_id END AS previous_secret_key_id,
           CASE WHEN previous_secret_expires_at > now() THEN previous_secret_ciphertext END AS previous_secret_ciphertext,
           CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_expires_at
    FROM webhook_endpoints WHERE org_id = ${orgId} AND id = ${id}`;
  return row;
}

/** The new secret signs from now on; the current one keeps signing for `overlapSeconds` (0: not at all). */
export async function rotateSecret(
  db: Db,
  orgId: string,
  id: string,
  next: Sealed,
  overlapSeconds: number,
  actor: string,
): Promise<EndpointRow | undefined> {
  const [row]: [EndpointRow?] = await db`
    UPDATE webhook_endpoints SET
      previous_secret_key_id = secret_key_id, previous_secret_ciphertext = secret_ciphertext,
      previous_secret_expires_at = now() + make_interval(secs => ${overlapSeconds}),
      secret_key_id = ${next.key_id}, secret_ciphertext = ${next.ciphertext},
      modified_by = ${actor}, updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id}
    RETURNING ${endpointColumns(db)}`;
  return row;
}

/**
 * Keeps the endpoint's failure streak: a success ends it, a failure starts it when none runs. Returns
 * when the streak started (null after a success).
 */
export async function recordEndpointOutcome(
  db: Db,
  orgId: string,
  endpointId: string,
  outcome: { lastSuccessAt: Date | null; firstFailureAt: Date | null },
): Promise<Date | null> {
  const [row]: [{ failing_since: Date | null }?] = outcome.lastSuccessAt
    ? await db`
        UPDATE webhook_endpoints SET failing_since = NULL, last_success_at = ${outcome.lastSuccessAt}
        WHERE org_id = ${orgId} AND id = ${endpointId} RETURNING failing_since`
    : await db`
        UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ${outcome.firstFailureAt})
        WHERE org_id = ${orgId} AND id = ${endpointId} RETURNING failing_since`;
  return row?.failing_since ?? null;
}

/** Disables an enabled endpoint that kept failing; false when it was already off or is gone. */
export async function disableFailingEndpoint(db: Db, orgId: string, endpointId: string): Promise<EndpointRow | undefined> {
  const [row]: [EndpointRow?] = await db`
    UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing', disabled_at = now(), updated_at = now()
    WHERE org_id = ${orgId} AND id = ${endpointId} AND enabled
    RETURNING ${endpointColumns(db)}`;
  return row;
}

/** Wakes the endpoint's actor at commit (an endpoint enabled again has deliveries waiting). */
export async function wakeEndpoint(db: Db, orgId: string, endpointId: string): Promise<void> {
  await db`SELECT pg_notify(${DELIVERY_CHANNEL}, ${`${orgId}:${endpointId}`})`;
}

// Messages -----------------------------------------------------------------------------------------

export interface MessageRow {
  id: string;
  org_id: string;
  event_type: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

/**
 * The message of an event and one pending delivery per enabled endpoint of the organization subscribed
 * to its type, in one statement of the caller's transaction; nothing at all when no endpoint subscribes.
 * Each endpoint that got a delivery is notified on DELIVERY_CHANNEL (at commit). Returns the deliveries made.
 */
export async function insertMessage(
  db: Db,
  orgId: string,
  m: { id: string; event_type: string; payload: Record<string, unknown> },
): Promise<number> {
  const rows = await db<{ endpoint_id: string }[]>`
    WITH targets AS (
      SELECT id FROM webhook_endpoints
      WHERE org_id = ${orgId} AND enabled AND (event_types IS NULL OR ${m.event_type} = ANY(event_types))
    ), message AS (
      INSERT INTO webhook_messages (id, org_id, event_type, payload)
      SELECT ${m.id}, ${orgId}, ${m.event_type}, ${db.json(m.payload as never)}
      WHERE EXISTS (SELECT 1 FROM targets)
      RETURNING id, created_at
    ), deliveries AS (
      INSERT INTO webhook_deliveries (org_id, endpoint_id, message_id, next_attempt_at, created_at)
      SELECT ${orgId}, targets.id, message.id, message.created_at, message.created_at FROM message, targets
      RETURNING endpoint_id
    )
    SELECT endpoint_id, pg_notify(${DELIVERY_CHANNEL}, ${orgId}::text || ':' || endpoint_id::text) FROM deliveries`;
  return rows.length;
}

export async function listMessages(
  db: Db,
  orgId: string,
  filters: { event_type?: string },
  page: { limit: number; after?: CreatedKey },
): Promise<{ rows: (MessageRow & { cursor_t: string })[]; total: number }> {
  const where = filters.event_type === undefined ? db`org_id = ${orgId}` : db`org_id = ${orgId} AND event_type = ${filters.event_type}`;
  return keysetPage<MessageRow>(db, { select: db`*`, from: db`webhook_messages`, where, ...page });
}

export async function getMessage(db: Db, orgId: string, id: string): Promise<MessageRow | undefined> {
  const [row]: [MessageRow?] = await db`SELECT * FROM webhook_messages WHERE org_id = ${orgId} AND id = ${id}`;
  return row;
}

// Events of other areas ------------------------------------------------------------------------------

/** Whether an enabled endpoint of the organization subscribes to the type (a producer of many events checks once). */
export async function anySubscriber(db: Db, orgId: string, eventType: string): Promise<boolean> {
  const [row]: [{ any: boolean }?] = await db`
    SELECT EXISTS (SELECT 1 FROM webhook_endpoints
                   WHERE org_id = ${orgId} AND enabled AND (event_types IS NULL OR ${eventType} = ANY(event_types))) AS any`;
  return row?.any ?? false;
}

export interface EndedCallRow {
  id: string;
  idempotency_key: string;
  campaign_id: string | null;
  campaign_name: string | null;
  contact_ref: string | null;
  agent_id: string | null;
  phone_number: string | null;
  direction: string | null;
  status: string;
  started_at: Date | null;
  ended_at: Date | null;
  duration_seconds: number | null;
  outcome: Record<string, unknown>;
}

/** The organization's calls with these keys, as they were just recorded. */
export async function endedCalls(db: Db, orgId: string, keys: string[]): Promise<EndedCallRow[]> {
  return db<EndedCallRow[]>`
    SELECT conv.id, conv.idempotency_key, conv.campaign_id, c.name AS campaign_name, conv.contact_ref, conv.agent_id,
           conv.phone_number, conv.direction, conv.status, conv.started_at, conv.ended_at, conv.duration_seconds, conv.outcome
    FROM conversations conv LEFT JOIN campaigns c ON c.org_id = conv.org_id AND c.id = conv.campaign_id
    WHERE conv.org_id = ${orgId} AND conv.idempotency_key = ANY(${keys}::text[])
    ORDER BY conv.ended_at NULLS LAST, conv.id`;
}
