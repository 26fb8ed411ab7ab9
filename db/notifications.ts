import type { EmailCadence } from '../domain/notification-events';
import type { NotificationEvent } from '../domain/notifications';
import { newId } from '../platform/core/ids';
import type { Db } from './client';
import { keysetAfter } from './kit/keyset';

/** Rows per multi-row INSERT: well below Postgres's 65,535 bind parameters per statement. */
const INSERT_CHUNK = 2000;

/** Inserts rows chunk by chunk; a row whose `conflict` key is already stored is skipped. The number written. */
async function insertSkippingConflicts(db: Db, table: string, conflict: string[], rows: Record<string, unknown>[]): Promise<number> {
  let count = 0;
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const result = await db`
      INSERT INTO ${db(table)} ${db(rows.slice(i, i + INSERT_CHUNK))}
      ON CONFLICT (${db(conflict)}) DO NOTHING`;
    count += result.count;
  }
  return count;
}

/** The channel the outbox wakes its relay on; pg_notify is delivered only when the writer commits. */
export const OUTBOX_CHANNEL = 'notification_outbox';

/** The event as the outbox stores it: the actor's event, of an organization, with created_at not yet serialized. */
export interface OutboxRow extends Omit<NotificationEvent, 'created_at'> {
  org_id: string;
  created_at: Date;
}

export type OutboxInput = Omit<NotificationEvent, 'id' | 'created_at'>;

export async function insertOutboxEvent(db: Db, orgId: string, e: OutboxInput): Promise<string> {
  const id = newId();
  await db`
    INSERT INTO notification_outbox (id, org_id, event_type, entity_type, entity_id, payload, actor_user_id, recipient_user_ids)
    VALUES (${id}, ${orgId}, ${e.event_type}, ${e.entity_type}, ${e.entity_id}, ${db.json(e.payload as never)},
            ${e.actor_user_id}, ${e.recipient_user_ids}::uuid[])`;
  await db`SELECT pg_notify(${OUTBOX_CHANNEL}, ${orgId})`;
  return id;
}

/**
 * Organizations with events not yet handed to their actor, oldest first. Not tenant-filtered: the relay
 * is the one reader that works across organizations, and it goes on per organization from here.
 */
export async function organizationsWithPendingOutbox(db: Db, limit: number, olderThanSeconds = 0): Promise<string[]> {
  const rows = await db<{ org_id: string }[]>`
    SELECT org_id FROM notification_outbox
    WHERE relayed_at IS NULL AND created_at <= now() - make_interval(secs => ${olderThanSeconds})
    GROUP BY org_id ORDER BY min(created_at) LIMIT ${limit}`;
  return rows.map((r) => r.org_id);
}

/** An organization's pending events, oldest first, locked so two relays never hand over the same rows. */
export async function claimPendingOutbox(db: Db, orgId: string, limit: number): Promise<OutboxRow[]> {
  return db<OutboxRow[]>`
    SELECT id, org_id, event_type, entity_type, entity_id, payload, actor_user_id, recipient_user_ids, created_at
    FROM notification_outbox
    WHERE org_id = ${orgId} AND relayed_at IS NULL
    ORDER BY created_at, id LIMIT ${limit}
    FOR UPDATE SKIP LOCKED`;
}

export async function markOutboxRelayed(db: Db, orgId: string, ids: string[]): Promise<void> {
  await db`UPDATE notification_outbox SET relayed_at = now() WHERE org_id = ${orgId} AND id = ANY(${ids}::uuid[])`;
}

export async function countPendingOutbox(db: Db, orgId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM notification_outbox WHERE org_id = ${orgId} AND relayed_at IS NULL`;
  return row!.n;
}

// Recipients --------------------------------------------------------------------------------------

export interface RecipientRow {
  user_id: string;
  external_id: string;
  email: string | null;
}

/** Members of the organization among the given service user ids. */
export async function membersByIds(db: Db, orgId: string, userIds: string[]): Promise<RecipientRow[]> {
  if (userIds.length === 0) return [];
  return db<RecipientRow[]>`
    SELECT u.id AS user_id, u.external_id, u.email FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE m.org_id = ${orgId} AND u.id = ANY(${userIds}::uuid[])`;
}

/**
 * Service user ids of the members named by actor strings (`user:<identity-provider id>`, as rows keep in
 * created_by); other actors (keys, `system:…`) and former members name nobody.
 */
export async function memberIdsOfActors(db: Db, orgId: string, actors: (string | null | undefined)[]): Promise<string[]> {
  const external = actors.filter((a): a is string => typeof a === 'string' && a.startsWith('user:')).map((a) => a.slice('user:'.length));
  if (external.length === 0) return [];
  const rows = await db<{ user_id: string }[]>`
    SELECT u.id AS user_id FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE m.org_id = ${orgId} AND u.external_id = ANY(${external}::text[])`;
  return rows.map((r) => r.user_id);
}

/** Members of the organization among the given identity-provider user ids (a deal's owner_id). */
export async function membersByExternalIds(db: Db, orgId: string, externalIds: string[]): Promise<RecipientRow[]> {
  if (externalIds.length === 0) return [];
  return db<RecipientRow[]>`
    SELECT u.id AS user_id, u.external_id, u.email FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE m.org_id = ${orgId} AND u.external_id = ANY(${externalIds}::text[])`;
}

/** Members who subscribed to an event type, whoever the event concerns. */
export async function subscribersOf(db: Db, orgId: string, eventType: string): Promise<RecipientRow[]> {
  return db<RecipientRow[]>`
    SELECT u.id AS user_id, u.external_id, u.email
    FROM notification_preferences p
    JOIN memberships m ON m.org_id = p.org_id AND m.user_id = p.user_id
    JOIN users u ON u.id = p.user_id
    WHERE p.org_id = ${orgId} AND p.event_type = ${eventType} AND p.subscribed`;
}

/** Members holding the organization-admin scope, who receive operational alerts nobody was named for. */
export async function organizationAdmins(db: Db, orgId: string): Promise<RecipientRow[]> {
  return db<RecipientRow[]>`
    SELECT u.id AS user_id, u.external_id, u.email FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE m.org_id = ${orgId} AND 'organizations:manage' = ANY(coalesce(m.scopes, '{}'))`;
}

// Preferences -------------------------------------------------------------------------------------

export interface PreferenceRow {
  user_id: string;
  event_type: string;
  in_app: boolean | null;
  email_cadence: EmailCadence | null;
  subscribed: boolean;
  updated_at: Date;
}

const PREFERENCE_COLUMNS = (db: Db) => db`user_id, event_type, in_app, email_cadence, subscribed, updated_at`;

export async function preferencesOfUser(db: Db, orgId: string, userId: string): Promise<PreferenceRow[]> {
  return db<PreferenceRow[]>`
    SELECT ${PREFERENCE_COLUMNS(db)} FROM notification_preferences
    WHERE org_id = ${orgId} AND user_id = ${userId}`;
}

/** Stored preferences of many users for the given event types (the actor's batch lookup). */
export async function preferencesOf(db: Db, orgId: string, userIds: string[], eventTypes: string[]): Promise<PreferenceRow[]> {
  if (userIds.length === 0 || eventTypes.length === 0) return [];
  return db<PreferenceRow[]>`
    SELECT ${PREFERENCE_COLUMNS(db)} FROM notification_preferences
    WHERE org_id = ${orgId} AND user_id = ANY(${userIds}::uuid[]) AND event_type = ANY(${eventTypes}::text[])`;
}

export async function upsertPreference(
  db: Db,
  orgId: string,
  userId: string,
  eventType: string,
  patch: { in_app?: boolean | null; email_cadence?: EmailCadence | null; subscribed?: boolean },
): Promise<PreferenceRow> {
  const has = (k: keyof typeof patch) => patch[k] !== undefined;
  const [row] = await db<PreferenceRow[]>`
    INSERT INTO notification_preferences (org_id, user_id, event_type, in_app, email_cadence, subscribed)
    VALUES (${orgId}, ${userId}, ${eventType}, ${patch.in_app ?? null}, ${patch.email_cadence ?? null}, ${patch.subscribed ?? false})
    ON CONFLICT (org_id, user_id, event_type) DO UPDATE SET
      in_app = ${has('in_app') ? db`EXCLUDED.in_app` : db`notification_preferences.in_app`},
      email_cadence = ${has('email_cadence') ? db`EXCLUDED.email_cadence` : db`notification_preferences.email_cadence`},
      subscribed = ${has('subscribed') ? db`EXCLUDED.subscribed` : db`notification_preferences.subscribed`},
      updated_at = now()
    RETURNING ${PREFERENCE_COLUMNS(db)}`;
  return row!;
}

// In-app feed -------------------------------------------------------------------------------------

export interface ItemRow {
  id: string;
  event_id: string;
  event_type: string;
  category: string;
  entity_type: string;
  entity_id: string;
  title: string;
  body: string;
  payload: Record<string, unknown>;
  created_at: Date;
  read_at: Date | null;
  archived_at: Date | null;
}

/** An item's content, addressed to a user; id, read_at and archived_at are the feed's. */
export interface NewItem extends Omit<ItemRow, 'id' | 'read_at' | 'archived_at'> {
  user_id: string;
}

/** Writes feed items; an item already written for the same user and event is left as it is. */
export async function insertItems(db: Db, orgId: string, items: NewItem[]): Promise<number> {
  if (items.length === 0) return 0;
  const rows = items.map((i) => ({
    id: newId(),
    org_id: orgId,
    user_id: i.user_id,
    event_id: i.event_id,
    event_type: i.event_type,
    category: i.category,
    entity_type: i.entity_type,
    entity_id: i.entity_id,
    title: i.title,
    body: i.body,
    payload: db.json(i.payload as never),
    created_at: i.created_at,
  }));
  return insertSkippingConflicts(db, 'notification_items', ['org_id', 'user_id', 'event_id'], rows);
}

const ITEM_COLUMNS = (db: Db) =>
  db`id, event_id, event_type, category, entity_type, entity_id, title, body, payload, created_at, read_at, archived_at`;

/** The user's feed, newest first (event time, then id), after a cursor position. */
export async function listItems(
  db: Db,
  orgId: string,
  userId: string,
  q: { unread: boolean; after?: { t: string; id: string }; limit: number },
): Promise<ItemRow[]> {
  return db<ItemRow[]>`
    SELECT ${ITEM_COLUMNS(db)} FROM notification_items
    WHERE org_id = ${orgId} AND user_id = ${userId} AND archived_at IS NULL
      ${q.unread ? db`AND read_at IS NULL` : db``}
      ${keysetAfter(db, q.after)}
    ORDER BY created_at DESC, id DESC LIMIT ${q.limit}`;
}

export async function countItems(db: Db, orgId: string, userId: string, unread: boolean): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM notification_items
    WHERE org_id = ${orgId} AND user_id = ${userId} AND archived_at IS NULL ${unread ? db`AND read_at IS NULL` : db``}`;
  return row!.n;
}

export async function markItemRead(db: Db, orgId: string, userId: string, itemId: string): Promise<ItemRow | undefined> {
  const [row]: [ItemRow?] = await db`
    UPDATE notification_items SET read_at = coalesce(read_at, now())
    WHERE org_id = ${orgId} AND user_id = ${userId} AND id = ${itemId} AND archived_at IS NULL
    RETURNING ${ITEM_COLUMNS(db)}`;
  return row;
}

export async function markAllRead(db: Db, orgId: string, userId: string): Promise<number> {
  const result = await db`
    UPDATE notification_items SET read_at = now()
    WHERE org_id = ${orgId} AND user_id = ${userId} AND archived_at IS NULL AND read_at IS NULL`;
  return result.count;
}

/** Archiving also reads the item; an archived item leaves the feed and the unread count. */
export async function archiveItem(db: Db, orgId: string, userId: string, itemId: string): Promise<ItemRow | undefined> {
  const [row]: [ItemRow?] = await db`
    UPDATE notification_items SET archived_at = coalesce(archived_at, now()), read_at = coalesce(read_at, now())
    WHERE org_id = ${orgId} AND user_id = ${userId} AND id = ${itemId}
    RETURNING ${ITEM_COLUMNS(db)}`;
  return row;
}

// Digests -----------------------------------------------------------------------------------------

export interface DigestEntry {
  user_id: string;
  event_id: string;
  event_type: string;
  title: string;
  body: string;
  created_at: Date;
}

export async function insertDigestEntries(db: Db, orgId: string, entries: DigestEntry[]): Promise<number> {
  if (entries.length === 0) return 0;
  const rows = entries.map((e) => ({ org_id: orgId, ...e }));
  return insertSkippingConflicts(db, 'notification_digest_entries', ['org_id', 'user_id', 'event_id'], rows);
}

/** Users with entries created before the window's end that no digest has taken yet. */
export async function usersWithPendingDigest(db: Db, orgId: string, until: Date): Promise<string[]> {
  const rows = await db<{ user_id: string }[]>`
    SELECT DISTINCT user_id FROM notification_digest_entries
    WHERE org_id = ${orgId} AND digest_email_id IS NULL AND created_at < ${until}`;
  return rows.map((r) => r.user_id);
}

export async function hasPendingDigest(db: Db, orgId: string): Promise<boolean> {
  const [row] = await db<{ any: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM notification_digest_entries WHERE org_id = ${orgId} AND digest_email_id IS NULL) AS any`;
  return row!.any;
}

/** Takes a user's pending entries for one digest email (locked in the caller's transaction). */
export async function takeDigestEntries(db: Db, orgId: string, userId: string, until: Date, emailId: string): Promise<DigestEntry[]> {
  return db<DigestEntry[]>`
    UPDATE notification_digest_entries SET digest_email_id = ${emailId}
    WHERE org_id = ${orgId} AND user_id = ${userId} AND digest_email_id IS NULL AND created_at < ${until}
    RETURNING user_id, event_id, event_type, title, body, created_at`;
}

// Emails ------------------------------------------------------------------------------------------

export interface EmailRow {
  id: string;
  user_id: string;
  idempotency_key: string;
  kind: 'immediate' | 'digest';
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  attempts: number;
  created_at: Date;
  sent_at: Date | null;
}

/** An email to queue; attempts, created_at and sent_at are the queue's. */
export interface NewEmail extends Omit<EmailRow, 'id' | 'attempts' | 'created_at' | 'sent_at'> {
  id?: string;
}

const EMAIL_COLUMNS = (db: Db) =>
  db`id, user_id, idempotency_key, kind, to_address, subject, text_body, html_body, attempts, created_at, sent_at`;

/** Queues emails; one whose idempotency key is already queued (or sent) is not queued again. */
export async function insertEmails(db: Db, orgId: string, emails: NewEmail[]): Promise<number> {
  if (emails.length === 0) return 0;
  const rows = emails.map((e) => ({ ...e, id: e.id ?? newId(), org_id: orgId }));
  return insertSkippingConflicts(db, 'notification_emails', ['org_id', 'idempotency_key'], rows);
}

/** One unsent email, locked so that two senders never send it twice at the same time. */
export async function claimUnsentEmail(db: Db, orgId: string, maxAttempts: number, skip: string[] = []): Promise<EmailRow | undefined> {
  const [row]: [EmailRow?] = await db`
    SELECT ${EMAIL_COLUMNS(db)} FROM notification_emails
    WHERE org_id = ${orgId} AND sent_at IS NULL AND attempts < ${maxAttempts} AND NOT (id = ANY(${skip}::uuid[]))
    ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`;
  return row;
}

export async function markEmailSent(db: Db, orgId: string, id: string): Promise<void> {
  await db`UPDATE notification_emails SET sent_at = now(), attempts = attempts + 1, last_error = NULL WHERE org_id = ${orgId} AND id = ${id}`;
}

export async function markEmailFailed(db: Db, orgId: string, id: string, error: string): Promise<void> {
  await db`UPDATE notification_emails SET attempts = attempts + 1, last_error = ${error.slice(0, 1000)} WHERE org_id = ${orgId} AND id = ${id}`;
}

export async function emailsOf(db: Db, orgId: string): Promise<EmailRow[]> {
  return db<EmailRow[]>`
    SELECT ${EMAIL_COLUMNS(db)} FROM notification_emails WHERE org_id = ${orgId} ORDER BY created_at, id`;
}

// Deals, as notifications see them ----------------------------------------------------------------

export interface DealFacts {
  id: string;
  name: string;
  value: string | null;
  currency: string | null;
  owner_id: string | null;
  stage: string;
}

export async function dealFacts(db: Db, orgId: string, dealId: string): Promise<DealFacts | undefined> {
  const [row]: [DealFacts?] = await db`
    SELECT id, name, value::text AS value, currency, owner_id, stage FROM deals WHERE org_id = ${orgId} AND id = ${dealId}`;
  return row;
}
