import type { BotHistoryEntry, BotStatus, MeetingPlatform } from '../domain/meetings';
import { newId } from '../platform/core/ids';
import type { Db } from './client';
import { keysetRows } from './kit/keyset';

export interface BotRow {
  id: string;
  org_id: string;
  meeting_url: string;
  platform: MeetingPlatform;
  bot_name: string;
  join_at: Date | null;
  account_id: string | null;
  deal_id: string | null;
  contact_ids: string[];
  status: BotStatus;
  status_reason: string | null;
  vendor: string;
  vendor_bot_id: string | null;
  recording_id: string | null;
  recording_url: string | null;
  recording_started_at: Date | null;
  recording_ended_at: Date | null;
  transcript_id: string | null;
  transcript: string | null;
  attendees: { name: string; email: string }[] | null;
  activity_id: string | null;
  leave_requested_at: Date | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  ended_at: Date | null;
}

export interface BotEventRow {
  id: string;
  status: BotStatus;
  vendor_code: string | null;
  sub_code: string | null;
  message: string | null;
  occurred_at: Date;
  created_at: Date;
}

export type NewBot = Pick<
  BotRow,
  'id' | 'meeting_url' | 'platform' | 'bot_name' | 'join_at' | 'account_id' | 'deal_id' | 'contact_ids' | 'vendor' | 'created_by'
>;

// --- links checked on create (under FOR KEY SHARE, so they cannot vanish before the insert commits) ---

export async function accountInOrg(db: Db, orgId: string, accountId: string): Promise<boolean> {
  return (await db`SELECT 1 FROM accounts WHERE id = ${accountId} AND org_id = ${orgId} FOR KEY SHARE`).length > 0;
}

export async function dealInOrg(db: Db, orgId: string, dealId: string): Promise<boolean> {
  return (await db`SELECT 1 FROM deals WHERE id = ${dealId} AND org_id = ${orgId} FOR KEY SHARE`).length > 0;
}

/** The ids among `contactIds` that are not contacts of the organization. */
export async function missingContacts(db: Db, orgId: string, contactIds: string[]): Promise<string[]> {
  if (!contactIds.length) return [];
  const found = await db<
    { id: string }[]
  >`SELECT id FROM contacts WHERE org_id = ${orgId} AND id = ANY(${contactIds}::uuid[]) FOR KEY SHARE`;
  const have = new Set(found.map((r) => r.id));
  return contactIds.filter((id) => !have.has(id));
}

// --- bots ---

export async function insertBot(db: Db, orgId: string, bot: NewBot): Promise<BotRow> {
  const [row] = await db<BotRow[]>`
    INSERT INTO meeting_bots (id, org_id, meeting_url, platform, bot_name, join_at, account_id, deal_id, contact_ids, vendor, created_by)
    VALUES (${bot.id}, ${orgId}, ${bot.meeting_url}, ${bot.platform}, ${bot.bot_name}, ${bot.join_at}, ${bot.account_id},
            ${bot.deal_id}, ${bot.contact_ids}::uuid[], ${bot.vendor}, ${bot.created_by})
    RETURNING *`;
  await db`INSERT INTO meeting_bot_events (id, org_id, bot_id, status, occurred_at) VALUES (${newId()}, ${orgId}, ${bot.id}, 'scheduled', now())`;
  return row!;
}

export async function findBot(db: Db, orgId: string, botId: string): Promise<BotRow | undefined> {
  const [row]: [BotRow?] = await db`SELECT * FROM meeting_bots WHERE id = ${botId} AND org_id = ${orgId}`;
  return row;
}

export async function botHistory(db: Db, orgId: string, botId: string): Promise<BotEventRow[]> {
  return db<BotEventRow[]>`
    SELECT id, status, vendor_code, sub_code, message, occurred_at, created_at FROM meeting_bot_events
    WHERE bot_id = ${botId} AND org_id = ${orgId} ORDER BY created_at, id`;
}

export type BotListRow = BotRow & { cursor_t: string };

const botWhere = (db: Db, orgId: string, filter: { status?: BotStatus; account_id?: string }) => db`
  org_id = ${orgId}
  ${filter.status ? db`AND status = ${filter.status}` : db``}
  ${filter.account_id ? db`AND account_id = ${filter.account_id}` : db``}`;

/** Newest first, one row more than `limit` to tell whether another page follows. */
export async function listBots(
  db: Db,
  orgId: string,
  filter: { status?: BotStatus; account_id?: string; limit: number; after?: { t: string; id: string } },
): Promise<BotListRow[]> {
  return keysetRows<BotRow>(db, {
    select: db`*`,
    from: db`meeting_bots`,
    where: botWhere(db, orgId, filter),
    limit: filter.limit,
    after: filter.after,
  });
}

export async function countBots(db: Db, orgId: string, filter: { status?: BotStatus; account_id?: string }): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM meeting_bots WHERE ${botWhere(db, orgId, filter)}`;
  return row!.n;
}

/** Marks a leave request on a bot that has not ended; undefined when there is no such bot. */
export async function requestLeave(db: Db, orgId: string, botId: string): Promise<BotRow | undefined> {
  const [row]: [BotRow?] = await db`
    UPDATE meeting_bots SET leave_requested_at = coalesce(leave_requested_at, now()), updated_at = now()
    WHERE id = ${botId} AND org_id = ${orgId} AND ended_at IS NULL
    RETURNING *`;
  return row;
}

/**
 * Records one webhook delivery for a bot; false when the same message id was recorded before (a
 * redelivery). A delivery's timestamp is only accepted within five minutes, so ids older than an
 * hour are pruned here.
 */
export async function recordDelivery(db: Db, orgId: string, botId: string, webhookId: string): Promise<boolean> {
  await db`DELETE FROM meeting_webhook_deliveries WHERE org_id = ${orgId} AND received_at < now() - interval '1 hour'`;
  const rows = await db`
    INSERT INTO meeting_webhook_deliveries (org_id, webhook_id, bot_id) VALUES (${orgId}, ${webhookId}, ${botId})
    ON CONFLICT (webhook_id) DO NOTHING RETURNING webhook_id`;
  return rows.length > 0;
}

// --- the workflow's writes ---

/** Moves the bot (never out of an ended state) and appends the entries to its history, in one statement each. */
export async function moveBot(
  db: Db,
  orgId: string,
  botId: string,
  change: { status: BotStatus; reason?: string | null; ended: boolean; vendor_bot_id?: string; history: BotHistoryEntry[] },
): Promise<boolean> {
  const moved = await db`
    UPDATE meeting_bots SET
      status = ${change.status},
      status_reason = coalesce(${change.reason ?? null}, status_reason),
      vendor_bot_id = coalesce(${change.vendor_bot_id ?? null}, vendor_bot_id),
      ended_at = ${change.ended ? db`now()` : db`NULL`},
      updated_at = now()
    WHERE id = ${botId} AND org_id = ${orgId} AND ended_at IS NULL
    RETURNING id`;
  if (!moved.length || !change.history.length) return moved.length > 0;
  const rows = change.history.map((h) => ({
    id: newId(),
    org_id: orgId,
    bot_id: botId,
    status: h.status,
    vendor_code: h.vendor_code ?? null,
    sub_code: h.sub_code ?? null,
    message: h.message ?? null,
    occurred_at: h.occurred_at ?? new Date().toISOString(),
  }));
  await db`INSERT INTO meeting_bot_events ${db(rows)}`;
  return true;
}

export async function setRecording(db: Db, orgId: string, botId: string, recordingId: string, transcriptId: string): Promise<void> {
  await db`
    UPDATE meeting_bots SET recording_id = ${recordingId}, transcript_id = ${transcriptId}, updated_at = now()
    WHERE id = ${botId} AND org_id = ${orgId}`;
}

export interface CapturedMeeting {
  recording_url: string | null;
  recording_started_at: string | null;
  recording_ended_at: string | null;
  transcript: string;
  attendees: { name: string; email: string }[];
  subject: string;
  provider: string;
  duration_minutes: number | null;
}

/**
 * Writes the meeting to the CRM and completes the bot, in one transaction holding the bot's row: the
 * `meeting` activity goes on the bot's deal (and its account, unless the bot names one) and its first
 * contact still in the organization; every linked contact is kept in the activity's metadata. A
 * repeat (an activity retry) returns the activity already written.
 */
export async function completeWithActivity(
  db: Db,
  orgId: string,
  botId: string,
  m: CapturedMeeting,
): Promise<{ activityId: string | null; created: boolean }> {
  const [bot]: [{ activity_id: string | null; ended_at: Date | null }?] = await db`
    SELECT activity_id, ended_at FROM meeting_bots WHERE id = ${botId} AND org_id = ${orgId} FOR UPDATE`;
  if (!bot) return { activityId: null, created: false };
  if (bot.activity_id || bot.ended_at) return { activityId: bot.activity_id, created: false };
  const activityId = newId();
  await db`
    INSERT INTO activities (id, org_id, account_id, deal_id, contact_id, type, subject, body, due_at, duration_minutes, metadata, created_by)
    SELECT ${activityId}, b.org_id, coalesce(b.account_id, d.account_id), d.id,
           (SELECT c.id FROM unnest(b.contact_ids) WITH ORDINALITY AS u(id, i)
              JOIN contacts c ON c.id = u.id AND c.org_id = b.org_id ORDER BY u.i LIMIT 1),
           'meeting', ${m.subject}, NULL, ${m.recording_started_at}, ${m.duration_minutes},
           jsonb_build_object(
             'attendees', ${db.json(m.attendees as never)}::jsonb,
             'transcript', ${m.transcript}::text,
             'recording_url', ${m.recording_url}::text,
             'location', b.meeting_url,
             'provider', ${m.provider}::text,
             'meeting_bot_id', b.id,
             'contact_ids', to_jsonb(b.contact_ids)),
           b.created_by
    FROM meeting_bots b LEFT JOIN deals d ON d.id = b.deal_id AND d.org_id = b.org_id
    WHERE b.id = ${botId} AND b.org_id = ${orgId}`;
  await db`
    UPDATE meeting_bots SET
      status = 'completed', ended_at = now(), updated_at = now(), activity_id = ${activityId},
      recording_url = ${m.recording_url}, recording_started_at = ${m.recording_started_at}, recording_ended_at = ${m.recording_ended_at},
      transcript = ${m.transcript}, attendees = ${db.json(m.attendees as never)}
    WHERE id = ${botId} AND org_id = ${orgId}`;
  await db`INSERT INTO meeting_bot_events (id, org_id, bot_id, status, occurred_at) VALUES (${newId()}, ${orgId}, ${botId}, 'completed', now())`;
  return { activityId, created: true };
}

/** The service user who sent the bot, while still a member of the organization: the notifications' recipient. */
export async function creatorUserId(db: Db, orgId: string, botId: string): Promise<string | null> {
  const [row]: [{ user_id: string }?] = await db`
    SELECT m.user_id FROM meeting_bots b
    JOIN users u ON b.created_by = 'user:' || u.external_id
    JOIN memberships m ON m.user_id = u.id AND m.org_id = b.org_id
    WHERE b.id = ${botId} AND b.org_id = ${orgId}`;
  return row?.user_id ?? null;
}

/**
 * The bot's advisory lock, for the length of the transaction: the create holds it while the row is
 * inserted and the workflow started, and the workflow's first read takes it, so it waits for that
 * transaction and sees its outcome.
 */
export async function lockBot(db: Db, orgId: string, botId: string): Promise<void> {
  await db`SELECT pg_advisory_xact_lock(hashtextextended(${`meeting-bot:${orgId}:${botId}`}, 0))`;
}
