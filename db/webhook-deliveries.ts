import type postgres from 'postgres';
import type { Db } from './client';
import { type CreatedKey, keysetPage } from './kit/keyset';
import { DELIVERY_CHANNEL } from './webhooks';

// SQL of webhook deliveries (a message to one endpoint) and their attempts: the claim an endpoint's actor
// makes, the record of what each attempt made of its delivery, resends, and the reads of the API. Every
// function filters by org_id, except the relay's sweep, which reads across organizations.

// Deliveries ---------------------------------------------------------------------------------------

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface DeliveryRow {
  endpoint_id: string;
  message_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  created_at: Date;
}

const deliveryColumns = (db: Db) =>
  db`d.endpoint_id, d.message_id, d.status, d.attempts, d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.created_at`;

/** A message's deliveries, one per endpoint it went to, oldest endpoint first. */
export async function messageDeliveries(db: Db, orgId: string, messageId: string): Promise<(DeliveryRow & { url: string })[]> {
  return db<(DeliveryRow & { url: string })[]>`
    SELECT ${deliveryColumns(db)}, e.url FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
    WHERE d.org_id = ${orgId} AND d.message_id = ${messageId}
    ORDER BY e.created_at, e.id`;
}

/** An endpoint's messages with their delivery to it, newest first. */
export async function endpointDeliveries(
  db: Db,
  orgId: string,
  endpointId: string,
  filters: { status?: DeliveryStatus },
  page: { limit: number; after?: CreatedKey },
): Promise<{ rows: (DeliveryRow & { event_type: string; cursor_t: string })[]; total: number }> {
  const status = filters.status === undefined ? db`` : db`AND d.status = ${filters.status}`;
  return keysetPage<DeliveryRow & { event_type: string }>(db, {
    select: db`${deliveryColumns(db)}, m.event_type`,
    from: db`webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id`,
    where: db`d.org_id = ${orgId} AND d.endpoint_id = ${endpointId} ${status}`,
    at: 'd.created_at',
    id: 'd.message_id',
    ...page,
  });
}

/**
 * Puts deliveries back in the queue with a fresh schedule, due now, and wakes their endpoints' actors
 * (at commit). `which`: one endpoint's delivery of the message, or every failed delivery of it to an
 * enabled endpoint. Returns the endpoints requeued.
 */
export async function requeueDeliveries(
  db: Db,
  orgId: string,
  messageId: string,
  which: { endpointId: string } | 'failed',
): Promise<string[]> {
  const filter = which === 'failed' ? db`AND d.status = 'failed'` : db`AND d.endpoint_id = ${which.endpointId}`;
  const rows = await db<{ endpoint_id: string }[]>`
    WITH requeued AS (
      UPDATE webhook_deliveries d SET status = 'pending', attempts = 0, next_attempt_at = now(), resent_at = now(), updated_at = now()
      FROM webhook_endpoints e
      WHERE d.org_id = ${orgId} AND d.message_id = ${messageId} ${filter} AND e.id = d.endpoint_id AND e.enabled
      RETURNING d.endpoint_id
    )
    SELECT endpoint_id, pg_notify(${DELIVERY_CHANNEL}, ${orgId}::text || ':' || endpoint_id::text) FROM requeued`;
  return rows.map((r) => r.endpoint_id);
}

/** A delivery due for an attempt, with what signing and sending it needs. */
export interface DueDelivery {
  message_id: string;
  event_type: string;
  payload: Record<string, unknown>;
  message_created_at: Date;
  /** Attempts already made in its current schedule. */
  attempts: number;
  manual: boolean;
}

/**
 * Claims up to `limit` of the endpoint's due deliveries, in the order they fell due (a healthy
 * endpoint's: the order of their events), pushing each one's due time `leaseSeconds` ahead: a worker
 * that dies mid-attempt hands them back by itself, and two claims never take the same row.
 */
export async function claimDue(db: Db, orgId: string, endpointId: string, limit: number, leaseSeconds: number): Promise<DueDelivery[]> {
  return db<DueDelivery[]>`
    WITH due AS (
      SELECT endpoint_id, message_id, next_attempt_at FROM webhook_deliveries
      WHERE endpoint_id = ${endpointId} AND org_id = ${orgId} AND status = 'pending' AND next_attempt_at <= now()
      ORDER BY next_attempt_at, message_id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => ${leaseSeconds})
      FROM due WHERE d.endpoint_id = due.endpoint_id AND d.message_id = due.message_id
      RETURNING d.message_id, d.attempts, d.resent_at, due.next_attempt_at AS was_due
    )
    SELECT c.message_id, m.event_type, m.payload, m.created_at AS message_created_at, c.attempts,
           (c.attempts = 0 AND c.resent_at IS NOT NULL) AS manual
    FROM claimed c JOIN webhook_messages m ON m.id = c.message_id
    ORDER BY c.was_due, c.message_id`;
}

export interface AttemptRecord {
  id: string;
  message_id: string;
  trigger: 'scheduled' | 'manual';
  status: 'succeeded' | 'failed';
  response_status_code: number | null;
  response_body: string;
  error: string | null;
  latency_ms: number;
  url: string;
  created_at: Date;
  /** The delivery after this attempt: succeeded, failed for good, or pending again at `next_attempt_at`. */
  delivery_status: DeliveryStatus;
  next_attempt_at: Date | null;
}

/** Writes a batch of attempts and what each made of its delivery, in two statements. */
export async function recordAttempts(db: Db, orgId: string, endpointId: string, attempts: AttemptRecord[]): Promise<void> {
  if (!attempts.length) return;
  await db`
    INSERT INTO webhook_attempts ${db(
      attempts.map((a) => ({
        id: a.id,
        org_id: orgId,
        endpoint_id: endpointId,
        message_id: a.message_id,
        trigger: a.trigger,
        status: a.status,
        response_status_code: a.response_status_code,
        response_body: a.response_body,
        error: a.error,
        latency_ms: a.latency_ms,
        url: a.url,
        created_at: a.created_at,
      })),
    )}`;
  const updates = attempts.map((a) => ({
    message_id: a.message_id,
    status: a.delivery_status,
    next_attempt_at: a.next_attempt_at?.toISOString() ?? null,
    attempted_at: a.created_at.toISOString(),
    status_code: a.response_status_code,
  }));
  await db`
    UPDATE webhook_deliveries d SET status = u.status, attempts = d.attempts + 1, next_attempt_at = u.next_attempt_at,
           last_attempt_at = u.attempted_at, last_status_code = u.status_code, updated_at = now()
    FROM jsonb_to_recordset(${db.json(updates as never)}) AS u(message_id uuid, status text, next_attempt_at timestamptz,
                                                              attempted_at timestamptz, status_code integer)
    WHERE d.endpoint_id = ${endpointId} AND d.org_id = ${orgId} AND d.message_id = u.message_id`;
}

/** Milliseconds until the endpoint's next pending delivery falls due (0 when one is due now); null when none is pending. */
export async function nextDueInMs(db: Db, orgId: string, endpointId: string): Promise<number | null> {
  const [row]: [{ ms: number | null }?] = await db`
    SELECT greatest(0, ceil(extract(epoch FROM min(next_attempt_at) - now()) * 1000))::float8 AS ms
    FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND org_id = ${orgId} AND status = 'pending'`;
  return row?.ms ?? null;
}

/**
 * Enabled endpoints with a delivery due for longer than `graceSeconds` (their actor missed a wake-up, or
 * is not running): what the relay's sweep wakes. Across organizations.
 */
export async function overdueEndpoints(db: Db, graceSeconds: number, limit: number): Promise<{ org_id: string; id: string }[]> {
  return db<{ org_id: string; id: string }[]>`
    SELECT e.org_id, e.id FROM webhook_endpoints e
    WHERE e.enabled AND EXISTS (
      SELECT 1 FROM webhook_deliveries d
      WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= now() - make_interval(secs => ${graceSeconds}))
    LIMIT ${limit}`;
}

// Attempts -----------------------------------------------------------------------------------------

export interface AttemptRow {
  id: string;
  endpoint_id: string;
  message_id: string;
  trigger: 'scheduled' | 'manual';
  status: 'succeeded' | 'failed';
  response_status_code: number | null;
  response_body: string;
  error: string | null;
  latency_ms: number;
  url: string;
  created_at: Date;
}

export async function listAttempts(
  db: Db,
  orgId: string,
  filters: { endpoint_id?: string; message_id?: string; status?: 'succeeded' | 'failed' },
  page: { limit: number; after?: CreatedKey },
): Promise<{ rows: (AttemptRow & { cursor_t: string })[]; total: number }> {
  const parts: postgres.PendingQuery<postgres.Row[]>[] = [db`org_id = ${orgId}`];
  if (filters.endpoint_id !== undefined) parts.push(db`endpoint_id = ${filters.endpoint_id}`);
  if (filters.message_id !== undefined) parts.push(db`message_id = ${filters.message_id}`);
  if (filters.status !== undefined) parts.push(db`status = ${filters.status}`);
  const where = parts.reduce((all, part) => db`${all} AND ${part}`);
  return keysetPage<AttemptRow>(db, {
    select: db`id, endpoint_id, message_id, trigger, status, response_status_code, response_body, error, latency_ms, url, created_at`,
    from: db`webhook_attempts`,
    where,
    ...page,
  });
}
