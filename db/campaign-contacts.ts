import { FINAL_CALL_STATUSES, isFinalCallStatus, type ContactState } from '../domain/campaigns';
import { newId } from '../platform/core/ids';
import type { Db } from './client';
import { keysetRows } from './kit/keyset';

export interface NewContact {
  external_id?: string | null;
  phone_numbers: string[];
  timezone?: string | null;
  scheduled_at?: string | null;
  agent_id?: string | null;
  agent_config?: Record<string, unknown> | null;
  agent_number?: string | null;
  agent_version?: number | null;
  initial_context?: string | null;
  data?: Record<string, unknown> | null;
}

export interface ContactRow {
  id: string;
  org_id: string;
  campaign_id: string;
  external_id: string | null;
  phone_numbers: string[];
  timezone: string | null;
  scheduled_at: Date | null;
  agent_id: string | null;
  agent_config: Record<string, unknown> | null;
  agent_number: string | null;
  agent_version: number | null;
  initial_context: string | null;
  data: Record<string, unknown> | null;
  status: ContactState;
  attempts: number;
  next_attempt_at: Date | null;
  dialed_at: Date | null;
  last_outcome: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * A contact whose current attempt is claimed and must be handed to the dialer, with its campaign's call
 * settings; `agent_config` is the agent's published configuration with the contact's overrides on top.
 */
export interface DialTarget {
  id: string;
  campaign_id: string;
  attempts: number;
  phone_numbers: string[];
  agent_id: string | null;
  agent_version: number | null;
  agent_config: Record<string, unknown> | null;
  agent_number: string | null;
  initial_context: string | null;
  data: Record<string, unknown> | null;
}

export type Progress = Record<ContactState | 'total', number>;

/** Arrays of Date or boolean confuse postgres.js's type inference: send text and cast in SQL. */
const isoOrNull = (d: Date | null) => d?.toISOString() ?? null;

/** postgres.js keeps one statement under 65,535 parameters; 14 columns a row. */
const INSERT_CHUNK = 2000;

const json = (db: Db, value: Record<string, unknown> | null | undefined) => (value == null ? null : db.json(value as never));

/** Stores contacts as pending, first due at their scheduled_at (or now). */
export async function insertContacts(db: Db, orgId: string, campaignId: string, contacts: NewContact[]): Promise<number> {
  const now = new Date();
  const rows = contacts.map((c) => {
    const scheduled = c.scheduled_at ? new Date(c.scheduled_at) : null;
    return {
      id: newId(),
      org_id: orgId,
      campaign_id: campaignId,
      external_id: c.external_id ?? null,
      phone_numbers: c.phone_numbers,
      timezone: c.timezone ?? null,
      scheduled_at: scheduled,
      agent_id: c.agent_id ?? null,
      agent_config: json(db, c.agent_config),
      agent_number: c.agent_number ?? null,
      agent_version: c.agent_version ?? null,
      initial_context: c.initial_context ?? null,
      data: json(db, c.data),
      next_attempt_at: scheduled ?? now,
    };
  });
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db`INSERT INTO campaign_contacts ${db(rows.slice(i, i + INSERT_CHUNK))}`;
  }
  return rows.length;
}

export async function listContacts(
  db: Db,
  orgId: string,
  campaignId: string,
  options: { status?: ContactState; limit: number; after?: { t: string; id: string } },
): Promise<(ContactRow & { cursor_t: string })[]> {
  const { status, limit, after } = options;
  return keysetRows<ContactRow>(db, {
    select: db`*`,
    from: db`campaign_contacts`,
    where: db`org_id = ${orgId} AND campaign_id = ${campaignId} ${status ? db`AND status = ${status}` : db``}`,
    order: 'asc',
    limit,
    after,
  });
}

export async function countContacts(db: Db, orgId: string, campaignId: string, status?: ContactState): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM campaign_contacts WHERE org_id = ${orgId} AND campaign_id = ${campaignId} ${status ? db`AND status = ${status}` : db``}`;
  return row!.n;
}

export async function progressOf(db: Db, orgId: string, campaignId: string): Promise<Progress> {
  const rows = await db<{ status: ContactState; n: number }[]>`
    SELECT status, count(*)::int AS n FROM campaign_contacts WHERE org_id = ${orgId} AND campaign_id = ${campaignId} GROUP BY status`;
  const progress: Progress = { total: 0, pending: 0, calling: 0, completed: 0, failed: 0, canceled: 0 };
  for (const r of rows) {
    progress[r.status] = r.n;
    progress.total += r.n;
  }
  return progress;
}

/** Calls in flight for the organization right now: the slots taken. */
export async function inFlightCount(db: Db, orgId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`SELECT count(*)::int AS n FROM campaign_contacts WHERE org_id = ${orgId} AND status = 'calling'`;
  return row!.n;
}

export async function countNonFinal(db: Db, orgId: string, campaignId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM campaign_contacts WHERE org_id = ${orgId} AND campaign_id = ${campaignId} AND status IN ('pending', 'calling')`;
  return row!.n;
}

export async function cancelPendingContacts(db: Db, orgId: string, campaignId: string): Promise<void> {
  await db`
    UPDATE campaign_contacts SET status = 'canceled', next_attempt_at = NULL, updated_at = now()
    WHERE org_id = ${orgId} AND campaign_id = ${campaignId} AND status = 'pending'`;
}

/** One page of a campaign's due contacts, earliest first, locked for this claim. */
export async function lockDueContacts(db: Db, orgId: string, campaignId: string, limit: number): Promise<ContactRow[]> {
  return db<ContactRow[]>`
    SELECT * FROM campaign_contacts
    WHERE org_id = ${orgId} AND campaign_id = ${campaignId} AND status = 'pending' AND next_attempt_at <= now()
    ORDER BY next_attempt_at, id
    LIMIT ${limit}
    FOR UPDATE SKIP LOCKED`;
}

export async function rescheduleContacts(db: Db, orgId: string, moves: { id: string; at: Date }[]): Promise<void> {
  if (!moves.length) return;
  await db`
    UPDATE campaign_contacts c SET next_attempt_at = v.at, updated_at = now()
    FROM unnest(${moves.map((m) => m.id)}::uuid[], ${moves.map((m) => m.at.toISOString())}::timestamptz[]) AS v(id, at)
    WHERE c.org_id = ${orgId} AND c.id = v.id`;
}

/** Starts the next attempt of each contact: `calling`, not yet handed to the dialer. */
export async function startAttempts(db: Db, orgId: string, ids: string[]): Promise<{ id: string; attempts: number }[]> {
  if (!ids.length) return [];
  return db<{ id: string; attempts: number }[]>`
    UPDATE campaign_contacts
    SET status = 'calling', attempts = attempts + 1, next_attempt_at = NULL, dialed_at = NULL, updated_at = now()
    WHERE org_id = ${orgId} AND id = ANY(${ids}::uuid[]) AND status = 'pending'
    RETURNING id, attempts`;
}

export interface NewConversation {
  agent_id: string | null;
  agent_version: number | null;
  campaign_id: string;
  contact_ref: string;
  phone_number: string;
  idempotency_key: string;
}

/** One conversation row per attempt, keyed by the attempt's idempotency key. */
export async function insertConversations(db: Db, orgId: string, rows: NewConversation[]): Promise<void> {
  if (!rows.length) return;
  const values = rows.map((r) => ({ id: newId(), org_id: orgId, ...r, direction: 'outbound', status: 'queued' }));
  for (let i = 0; i < values.length; i += INSERT_CHUNK) {
    await db`INSERT INTO conversations ${db(values.slice(i, i + INSERT_CHUNK))} ON CONFLICT (idempotency_key) DO NOTHING`;
  }
}

/** Attempts claimed but not yet accepted by the dialer, including those a crashed cycle left behind. */
export async function undialedAttempts(db: Db, orgId: string): Promise<DialTarget[]> {
  return db<DialTarget[]>`
    SELECT cc.id, cc.campaign_id, cc.attempts, cc.phone_numbers, cc.initial_context, cc.data,
           CASE WHEN av.config IS NULL AND cc.agent_config IS NULL THEN NULL
                ELSE coalesce(av.config, '{}'::jsonb) || coalesce(cc.agent_config, '{}'::jsonb) END AS agent_config,
           coalesce(cc.agent_id, c.agent_id) AS agent_id,
           coalesce(cc.agent_version, c.version) AS agent_version,
           coalesce(cc.agent_number, c.agent_number) AS agent_number
    FROM campaign_contacts cc JOIN campaigns c ON c.id = cc.campaign_id AND c.org_id = cc.org_id
    -- The agent's published configuration (the version named, else the latest published), under the contact's overrides.
    LEFT JOIN LATERAL (
      SELECT v.config FROM agent_versions v
      WHERE v.org_id = cc.org_id AND v.agent_id = coalesce(cc.agent_id, c.agent_id) AND v.published
        AND (coalesce(cc.agent_version, c.version) IS NULL OR v.version = coalesce(cc.agent_version, c.version))
      ORDER BY v.version DESC LIMIT 1) av ON true
    WHERE cc.org_id = ${orgId} AND cc.status = 'calling' AND cc.dialed_at IS NULL
    ORDER BY c.priority DESC, cc.updated_at, cc.id`;
}

/** Marks attempts accepted by the dialer: the contacts dialed and their conversations ringing, in one statement. */
export async function markDialed(db: Db, orgId: string, dialed: { id: string; key: string }[]): Promise<void> {
  if (!dialed.length) return;
  await db`
    WITH contacts AS (
      UPDATE campaign_contacts SET dialed_at = now(), updated_at = now()
      WHERE org_id = ${orgId} AND id = ANY(${dialed.map((d) => d.id)}::uuid[]) AND status = 'calling' AND dialed_at IS NULL)
    UPDATE conversations SET status = 'ringing', started_at = coalesce(started_at, now()), updated_at = now()
    WHERE org_id = ${orgId} AND idempotency_key = ANY(${dialed.map((d) => d.key)}::text[]) AND status = 'queued'`;
}

/** Keys of the organization's calls handed to the dialer before `before`. */
export async function callsDialedBefore(
  db: Db,
  orgId: string,
  before: Date,
): Promise<{ id: string; campaign_id: string; attempts: number }[]> {
  return db<{ id: string; campaign_id: string; attempts: number }[]>`
    SELECT id, campaign_id, attempts FROM campaign_contacts
    WHERE org_id = ${orgId} AND status = 'calling' AND dialed_at < ${before}`;
}

/** The earliest next attempt among the organization's active campaigns, or null when none waits. */
export async function nextDueAt(db: Db, orgId: string): Promise<Date | null> {
  const [row] = await db<{ at: Date | null }[]>`
    SELECT min(x.at) AS at
    FROM campaigns c,
         LATERAL (SELECT next_attempt_at AS at FROM campaign_contacts
                  WHERE org_id = ${orgId} AND campaign_id = c.id AND status = 'pending' ORDER BY next_attempt_at LIMIT 1) x
    WHERE c.org_id = ${orgId} AND c.status = 'active'`;
  return row?.at ?? null;
}

/** Of the given campaigns, the active ones with no contact left to call. */
export async function settledCampaigns(db: Db, orgId: string, campaignIds: string[]): Promise<string[]> {
  if (!campaignIds.length) return [];
  const rows = await db<{ id: string }[]>`
    SELECT c.id FROM campaigns c
    WHERE c.org_id = ${orgId} AND c.id = ANY(${campaignIds}::uuid[]) AND c.status = 'active'
      AND NOT EXISTS (SELECT 1 FROM campaign_contacts cc WHERE cc.org_id = ${orgId} AND cc.campaign_id = c.id AND cc.status IN ('pending', 'calling'))`;
  return rows.map((r) => r.id);
}

/**
 * The organization of a campaign call, by its idempotency key. The one lookup across organizations:
 * the signed provider callback names no organization, and the key (unique) is all it carries.
 */
export async function conversationOrg(db: Db, idempotencyKey: string): Promise<string | undefined> {
  const [row]: [{ org_id: string }?] = await db`
    SELECT org_id FROM conversations WHERE idempotency_key = ${idempotencyKey} AND campaign_id IS NOT NULL`;
  return row?.org_id;
}

export interface ConversationUpdate {
  key: string;
  status: string;
  started_at: Date | null;
  ended_at: Date | null;
  duration_seconds: number | null;
  /** JSON text merged into the row's outcome. */
  outcome: string | null;
}

/** Applies call events to conversations still in flight; returns the keys whose final status was applied. */
export async function updateConversations(db: Db, orgId: string, updates: ConversationUpdate[]): Promise<string[]> {
  if (!updates.length) return [];
  const rows = await db<{ idempotency_key: string; status: string }[]>`
    UPDATE conversations c SET
      status = v.status,
      started_at = coalesce(c.started_at, v.started_at),
      ended_at = CASE WHEN v.status = ANY(${FINAL_CALL_STATUSES as string[]}::text[]) THEN coalesce(v.ended_at, now()) ELSE c.ended_at END,
      duration_seconds = coalesce(v.duration_seconds, c.duration_seconds),
      outcome = CASE WHEN v.outcome IS NULL THEN c.outcome ELSE c.outcome || v.outcome::jsonb END,
      updated_at = now()
    FROM unnest(
      ${updates.map((u) => u.key)}::text[], ${updates.map((u) => u.status)}::text[],
      ${updates.map((u) => isoOrNull(u.started_at))}::timestamptz[], ${updates.map((u) => isoOrNull(u.ended_at))}::timestamptz[],
      ${updates.map((u) => u.duration_seconds)}::int[], ${updates.map((u) => u.outcome)}::text[]
    ) AS v(key, status, started_at, ended_at, duration_seconds, outcome)
    WHERE c.idempotency_key = v.key AND c.org_id = ${orgId} AND c.status IN ('queued', 'ringing', 'in_progress')
    RETURNING c.idempotency_key, c.status`;
  return rows.filter((r) => isFinalCallStatus(r.status)).map((r) => r.idempotency_key);
}

export interface CallingContact {
  id: string;
  campaign_id: string;
  attempts: number;
  campaign_status: string;
  max_attempts: number;
  retry_backoff_seconds: number;
}

export async function lockCallingContacts(db: Db, orgId: string, ids: string[]): Promise<CallingContact[]> {
  if (!ids.length) return [];
  return db<CallingContact[]>`
    SELECT cc.id, cc.campaign_id, cc.attempts, c.status AS campaign_status, c.max_attempts, c.retry_backoff_seconds
    FROM campaign_contacts cc JOIN campaigns c ON c.id = cc.campaign_id AND c.org_id = cc.org_id
    WHERE cc.org_id = ${orgId} AND cc.id = ANY(${ids}::uuid[]) AND cc.status = 'calling'
    ORDER BY cc.id
    FOR UPDATE OF cc`;
}

/** Ends the current attempt of each contact: final, or pending again until its retry time. */
export async function finishAttempts(
  db: Db,
  orgId: string,
  ends: { id: string; status: ContactState; next_attempt_at: Date | null; last_outcome: string }[],
): Promise<void> {
  if (!ends.length) return;
  await db`
    UPDATE campaign_contacts cc SET status = v.status, next_attempt_at = v.at, last_outcome = v.outcome, dialed_at = NULL, updated_at = now()
    FROM unnest(${ends.map((e) => e.id)}::uuid[], ${ends.map((e) => e.status)}::text[], ${ends.map((e) => isoOrNull(e.next_attempt_at))}::timestamptz[],
                ${ends.map((e) => e.last_outcome)}::text[]) AS v(id, status, at, outcome)
    WHERE cc.org_id = ${orgId} AND cc.id = v.id`;
}
